"""The AWS CLI, kept running for the tests: the `aws` script's own `awscli.clidriver`, run once per
request line on stdin, its exit code and output written back as one JSON line on stdout.

One `aws` process costs 0.4 s of CPU to import the CLI and parse the service's model; here only the
first command pays it. Each command still gets a session of its own, built as `aws` builds it, from
the environment the request names (its keys, region and config files); only the parsed models are
shared, as one session shares them between its clients.
"""
import io
import json
import os
import sys

answers = sys.stdout
import awscli.clidriver  # noqa: E402  (sets AWS_DATA_PATH, which every command needs)

CLI_OWN = {"AWS_DATA_PATH": os.environ["AWS_DATA_PATH"]}
models = None


class Kept(io.BytesIO):
    """A command's output, still readable after the CLI closes its stream."""

    def close(self):
        pass


for line in sys.stdin:
    request = json.loads(line)
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ.update(CLI_OWN)
    out, err = Kept(), Kept()
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    try:
        driver = awscli.clidriver.create_clidriver()
        if models is None:
            models = driver.session.get_component("data_loader")
        else:
            driver.session.register_component("data_loader", models)
        code = driver.main(request["args"])
    except SystemExit as exit:
        # As the interpreter exits: no code is 0, a message is 1.
        code = 0 if exit.code is None else exit.code if isinstance(exit.code, int) else 1
    finally:
        sys.stdout, sys.stderr = answers, sys.__stderr__
    answer = {"code": code, "stdout": out.getvalue().decode(), "stderr": err.getvalue().decode()}
    answers.write(json.dumps(answer) + "\n")
    answers.flush()
