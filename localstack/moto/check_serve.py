#!/usr/bin/env python3
"""Checks that serve.py's moto answers as moto's own does: the same requests, against the same
state, answered once by moto's own lookups and serializer and once by serve.py's (2. and 6. in its
docstring), must be the same text but for request ids. Exits 1 naming the first request that
differs.

Run by `cargo test -p phantom-e2e --test cloud_contract` (serve_py_answers_as_moto_does).
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve  # noqa: E402  (patches moto as it is imported)

from moto.core.serialize import AttributePicker  # noqa: E402
from moto.ec2.models.instances import InstanceBackend  # noqa: E402
from moto.server import DomainDispatcherApplication, create_backend_app  # noqa: E402
from werkzeug.test import Client  # noqa: E402

client = Client(DomainDispatcherApplication(create_backend_app))
AUTH = (
    "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261129/us-east-1/{}/aws4_request, "
    "SignedHeaders=host, Signature=0"
)
EC2 = "Version=2016-11-15&Action="
ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|<[Rr]equestId>[^<]*<")


def call(service: str, body: str) -> str:
    headers = {"Authorization": AUTH.format(service), "Content-Type": "application/x-www-form-urlencoded"}
    answer = client.post("/", data=body, headers=headers)
    return ID.sub("ID", answer.get_data(as_text=True))


owner = "TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=phantom:owner"
call("ec2", EC2 + f"RunInstances&ImageId=ami-1e749f67&MinCount=3&MaxCount=3&InstanceType=t3.micro&{owner}&TagSpecification.1.Tag.1.Value=u1")
call("ec2", EC2 + "RunInstances&ImageId=ami-1e749f67&MinCount=1&MaxCount=1&InstanceType=t3.micro")
call("ec2", EC2 + f"RunInstances&ImageId=ami-1e749f67&MinCount=2&MaxCount=2&InstanceType=t3.micro&{owner}&TagSpecification.1.Tag.1.Value=u1")
vms = re.findall(r"<instanceId>(i-[0-9a-f]+)</instanceId>", call("ec2", EC2 + "DescribeInstances"))
call("ec2", EC2 + f"TerminateInstances&InstanceId.1={vms[0]}&InstanceId.2={vms[4]}")
call("sqs", "Version=2012-11-05&Action=CreateQueue&QueueName=q1")

ASKED = [
    ("ec2", EC2 + "DescribeInstances"),
    ("ec2", EC2 + "DescribeInstances&Filter.1.Name=tag:phantom:owner&Filter.1.Value.1=u1"),
    ("ec2", EC2 + f"DescribeInstances&InstanceId.1={vms[1]}&InstanceId.2={vms[5]}"),
    ("ec2", EC2 + "DescribeInstances&Filter.1.Name=tag:phantom:owner&Filter.1.Value.1=u1"
     "&Filter.2.Name=instance-state-name&Filter.2.Value.1=pending&Filter.2.Value.2=running"),
    ("ec2", EC2 + "DescribeInstances&Filter.1.Name=instance-state-name&Filter.1.Value.1=terminated"),
    ("ec2", EC2 + f"DescribeInstances&InstanceId.1={vms[5]}&InstanceId.2={vms[0]}&InstanceId.3={vms[2]}"
     "&Filter.1.Name=instance-state-name&Filter.1.Value.1=running"),
    ("ec2", EC2 + f"DescribeInstances&InstanceId.1={vms[1]}&InstanceId.2=i-0123456789abcdef0"),
    ("ec2", EC2 + "DescribeInstanceStatus&IncludeAllInstances=true"),
    ("ec2", EC2 + "DescribeTags"),
    ("ec2", EC2 + "DescribeImages&ImageId.1=ami-1e749f67"),
    ("ec2", EC2 + "DescribeSubnets"),
    ("ec2", EC2 + "DescribeSecurityGroups"),
    ("ec2", EC2 + "DescribeAvailabilityZones"),
    ("ec2", EC2 + "DescribeInstanceTypes&InstanceType.1=t3.micro"),
    ("sqs", "Version=2012-11-05&Action=GetQueueAttributes&QueueUrl=http://localhost/123456789012/q1&AttributeName.1=All"),
    ("elasticloadbalancing", "Version=2015-12-01&Action=DescribeLoadBalancers"),
]


def as_moto(on: bool) -> None:
    AttributePicker.__call__ = serve.moto_pick if on else serve.pick
    InstanceBackend.all_reservations = serve.all_reservations if on else serve.all_reservations_indexed
    InstanceBackend.get_reservations_by_instance_ids = (
        serve.moto_by_ids if on else serve.get_reservations_by_instance_ids_indexed
    )


for service, body in ASKED:
    as_moto(True)
    moto = call(service, body)
    as_moto(False)
    ours = [call(service, body) for _ in range(2)]
    if ours != [moto, moto]:
        sys.exit(f"check_serve.py: serve.py answers {body} otherwise than moto:\n{moto}\n{ours[0]}")

# A reservation still gaining VMs when it was first read (RunInstances on another thread adds the
# reservation, then its VMs one by one): its later VMs are found once newer ones are indexed too.
from moto.ec2.models import ec2_backends  # noqa: E402

backend = ec2_backends["123456789012"]["us-east-1"]
oldest = next(iter(backend.reservations.values()))
late = oldest.instances.pop()
serve.index(backend).vms.pop(late.id, None)
assert serve.find(backend, vms[-1]) is not None
oldest.instances.append(late)
if serve.find(backend, late.id) is None:
    sys.exit(f"check_serve.py: {late.id}, added to its reservation after it was read, is not found")
print(f"check_serve.py: {len(ASKED)} answers the same as moto's")
