#!/usr/bin/env python3
"""A fault-injecting HTTP proxy in front of a cloud's EC2 endpoint, for the fault tests.

Usage: faultproxy.py PORT TARGET_URL

Control (JSON): POST /__fault {"mode": M, "rate": 0.0-1.0, "delay": seconds}; GET /__fault returns
the counts, and the parameters of the last RunInstances calls ("runs", up to 20).
Modes, applied to a `rate` share of requests:
  none      forward everything
  error500  answer 500 InternalError without forwarding
  throttle  answer 503 RequestLimitExceeded without forwarding
  drop      close the connection without an answer, without forwarding
  slow      forward after a delay (`delay`, 2 s unless set)
  timeout   hold the request 25 s (past the EC2 client's 20 s attempt timeout), then drop it
  lost      forward, then answer 500 as if the answer were lost (the cloud acted)
  capacity  answer RunInstances with InsufficientInstanceCapacity (a full cloud); forward the rest
And, whatever the mode: "impaired": {"i-...": "system" | "instance" | "ebs"} makes the cloud's
DescribeInstanceStatus answers say that check of that VM is impaired since it was set (as EC2
says it, with impairedSince); "events": {"i-...": "instance-retirement"} adds a scheduled event
a week ahead.
"""
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

state = {"mode": "none", "rate": 0.0, "delay": 2.0, "impaired": {}, "events": {}}
# When each VM's check was first said impaired: (id, which) -> ISO 8601.
impaired_since = {}
counts = {"forwarded": 0, "injected": 0}
runs = []
lock = threading.Lock()
target = urllib.parse.urlparse(sys.argv[2])

ERROR = ('<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>{code}</Code>'
         '<Message>{message}</Message></Error></Errors><RequestID>fault</RequestID></Response>')


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="text/xml"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/__fault":
            with lock:
                return self.reply(200, json.dumps({**state, **counts, "runs": runs}), "application/json")
        self.forward(b"")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/__fault":
            with lock:
                state.update(json.loads(body))
                now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
                for vm, which in state["impaired"].items():
                    impaired_since.setdefault((vm, which), now)
            return self.reply(200, "{}", "application/json")
        self.forward(body)

    def forward(self, body):
        with lock:
            if b"Action=RunInstances" in body:
                runs.append(dict(urllib.parse.parse_qsl(body.decode())))
                del runs[:-20]
            mode = state["mode"] if random.random() < state["rate"] else "none"
            if mode == "capacity" and b"Action=RunInstances" not in body:
                mode = "none"
            counts["injected" if mode != "none" else "forwarded"] += 1
            delay = state["delay"]
        if mode == "capacity":
            return self.reply(500, ERROR.format(
                code="InsufficientInstanceCapacity",
                message="We currently do not have sufficient capacity in the Availability Zone you requested."))
        if mode == "error500":
            return self.reply(500, ERROR.format(code="InternalError", message="injected fault"))
        if mode == "throttle":
            return self.reply(503, ERROR.format(code="RequestLimitExceeded", message="Request limit exceeded."))
        if mode == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if mode == "timeout":
            time.sleep(25)
            self.close_connection = True
            return
        if mode == "slow":
            time.sleep(delay)
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        headers["Host"] = self.headers.get("Host", target.netloc)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except OSError:
            # The cloud behind is down (a test killed it): the client sees the connection close
            # with no answer, and nothing is printed (a test's own fault is no error of the run).
            self.close_connection = True
            return
        if mode == "lost":
            return self.reply(500, ERROR.format(code="InternalError", message="injected: answer lost"))
        if b"Action=DescribeInstanceStatus" in body and resp.status == 200:
            data = statuses(data)
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def statuses(data):
    """A DescribeInstanceStatus answer with the impairments and events the test set."""
    with lock:
        impaired = dict(state["impaired"])
        events = dict(state["events"])
    if not impaired and not events:
        return data
    root = ET.fromstring(data)
    ns = root.tag[1:].split("}")[0] if root.tag.startswith("{") else ""
    q = lambda name: f"{{{ns}}}{name}" if ns else name
    ET.register_namespace("", ns)
    for item in root.iter(q("item")):
        vm = item.find(q("instanceId"))
        if vm is None:
            continue
        which = impaired.get(vm.text)
        if which:
            tag = {"system": "systemStatus", "instance": "instanceStatus", "ebs": "attachedEbsStatus"}[which]
            check = item.find(q(tag))
            if check is None:
                check = ET.SubElement(item, q(tag))
            for old in list(check):
                check.remove(old)
            details = ET.SubElement(check, q("details"))
            detail = ET.SubElement(details, q("item"))
            ET.SubElement(detail, q("name")).text = "reachability"
            ET.SubElement(detail, q("status")).text = "failed"
            ET.SubElement(detail, q("impairedSince")).text = impaired_since[(vm.text, which)]
            ET.SubElement(check, q("status")).text = "impaired"
        code = events.get(vm.text)
        if code:
            ahead = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 7 * 86400))
            evs = ET.SubElement(item, q("eventsSet"))
            ev = ET.SubElement(evs, q("item"))
            ET.SubElement(ev, q("code")).text = code
            ET.SubElement(ev, q("description")).text = f"The instance is scheduled for {code}"
            ET.SubElement(ev, q("notBefore")).text = ahead
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that gave up (a killed caller, a timed-out attempt) is what the faults make.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
