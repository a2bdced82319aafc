"""Runs LocalStack's runtime as `python -m localstack.runtime.main` does, with one fix (start.sh uses it).

LocalStack 4.4.0's twisted gateway server (the default) listens on every interface, 0.0.0.0:PORT,
whatever GATEWAY_LISTEN says: it builds its IPv4 endpoints without the interface
(`TCP4ServerEndpoint(reactor, port)`, marked "TODO: interface = host?" in
localstack/runtime/server/twisted.py). Here each IPv4 endpoint gets the host that GATEWAY_LISTEN
gives for its port, so GATEWAY_LISTEN=127.0.0.1:PORT listens on the loopback interface only.
"""

import runpy
import types
import warnings

# Imported before LocalStack sets up its logging, twisted would warn on stderr that the optional
# service_identity module (TLS client hostname checks, unused here) is missing.
warnings.filterwarnings("ignore", message=".*service_identity module", category=UserWarning)

from twisted.internet import endpoints  # noqa: E402

import localstack.runtime.server.twisted as twisted_server  # noqa: E402
from localstack import config  # noqa: E402

_hosts = {listen.port: listen.host for listen in config.GATEWAY_LISTEN}


def _tcp4_server_endpoint(reactor, port, backlog=50, interface=""):
    return endpoints.TCP4ServerEndpoint(reactor, port, backlog, interface or _hosts.get(port, ""))


if not hasattr(twisted_server, "endpoints"):
    raise SystemExit("launch.py: localstack.runtime.server.twisted changed; review the bind fix")
twisted_server.endpoints = types.SimpleNamespace(
    TCP4ServerEndpoint=_tcp4_server_endpoint,
    TCP6ServerEndpoint=endpoints.TCP6ServerEndpoint,
)

runpy.run_module("localstack.runtime.main", run_name="__main__", alter_sys=True)
