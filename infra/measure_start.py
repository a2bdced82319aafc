#!/usr/bin/env python3
"""Cold-start cost of the Lambda binaries: the time from process start until the function asks the
Runtime API for its first event (GET /2018-06-01/runtime/invocation/next), the part of a cold start
Lambda bills. A stub Runtime API on loopback stands in for Lambda's.

Usage: measure_start.py DIR [RUNS]   (DIR: cargo lambda's output, target/lambda, one folder per
function with its `bootstrap`). Prints size and p50/max start-to-ready per function.
"""
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ready = threading.Event()


class Runtime(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.endswith("/runtime/invocation/next"):
            ready.set()
            time.sleep(5)  # hold the long poll; the process is killed meanwhile
        self.send_response(500)
        self.end_headers()


def main():
    root, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10
    server = ThreadingHTTPServer(("127.0.0.1", 0), Runtime)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = dict(os.environ,
               AWS_LAMBDA_RUNTIME_API=f"127.0.0.1:{server.server_port}",
               AWS_LAMBDA_FUNCTION_NAME="measure", AWS_LAMBDA_FUNCTION_MEMORY_SIZE="256",
               AWS_LAMBDA_FUNCTION_VERSION="1", AWS_LAMBDA_LOG_STREAM_NAME="s", AWS_LAMBDA_LOG_GROUP_NAME="g",
               AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="y",
               AWS_EC2_METADATA_DISABLED="true", PHANTOM_STATE_TABLE="phantom-state",
               PHANTOM_SECRETS_KEY="alias/measure",
               PHANTOM_WORK_QUEUE_URL="http://127.0.0.1:9/q")
    print("| function | bootstrap size | start to ready p50 | max |")
    print("|---|---|---|---|")
    for fn in sorted(os.listdir(root)):
        path = os.path.join(root, fn, "bootstrap")
        if not os.path.exists(path):
            continue
        times = []
        for _ in range(runs):
            ready.clear()
            t = time.perf_counter()
            p = subprocess.Popen([path], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if not ready.wait(10):
                p.kill()
                raise SystemExit(f"{fn} never asked for an event")
            times.append((time.perf_counter() - t) * 1e3)
            p.kill()
            p.wait()
        size = os.path.getsize(path) / 1e6
        print(f"| {fn} | {size:.1f} MB | {statistics.median(times):.1f} ms | {max(times):.1f} ms |")


if __name__ == "__main__":
    main()
