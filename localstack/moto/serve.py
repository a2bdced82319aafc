#!/usr/bin/env python3
"""moto_server as the local stack runs it, with two changes that let a local cloud hold 1,000 VMs.

Usage is moto_server's: `python3 localstack/moto/serve.py -H 127.0.0.1 -p PORT`.

1. A resource's tags are read from the tag table by its id. moto 5.2 scans every tag of every
   resource with a regular expression to find one resource's tags, so a DescribeInstances of
   N VMs took N x N matches (3.0 s for 1,000 VMs).
2. DescribeInstances by exact tag values or instance ids (Phantom's looks) first keeps the VMs
   whose tags or id are among them, read from dicts; moto's own filters then run on those few.
   moto compiles a regular expression for each VM and filter (20 ms a call at 1,000 VMs).
3. A terminated VM is forgotten PHANTOM_CLOUD_FORGET_SECS after its termination (default 3600),
   as EC2 forgets it after about an hour; moto keeps every one for good. A forgotten id is
   InvalidInstanceID.NotFound, as on EC2.
4. moto's list of its own services is read once; its server listed its folder for each request
   (about 180 stat calls).
"""

import copy
import functools
import os
import sys
import time

from moto import backends
from moto.ec2.models.core import TaggedEC2Resource
from moto.ec2.models.instances import Instance, InstanceBackend
from moto.ec2.utils import EC2_PREFIX_TO_RESOURCE, filter_reservations, get_prefix
from moto.ec2.exceptions import InvalidInstanceIdError
from moto.server import main


def forget_after() -> float:
    raw = os.environ.get("PHANTOM_CLOUD_FORGET_SECS", "3600")
    try:
        secs = float(raw)
    except ValueError:
        sys.exit(f"serve.py: PHANTOM_CLOUD_FORGET_SECS is a number of seconds, not {raw!r}")
    if secs < 0:
        sys.exit(f"serve.py: PHANTOM_CLOUD_FORGET_SECS is not negative, not {raw!r}")
    return secs


FORGET_AFTER = forget_after()


def get_tags(self):
    # The same list moto's describe_tags(filters={"resource-id": [id]}) gives, found by key.
    tags = self.ec2_backend.tags.get(self.id) if self.id else None
    if not tags:
        return []
    kind = EC2_PREFIX_TO_RESOURCE.get(get_prefix(self.id), "")
    return [
        {"resource_id": self.id, "key": k, "value": v, "resource_type": kind}
        for k, v in tags.items()
    ]


terminate = Instance.terminate


def terminate_and_stamp(self):
    previous = terminate(self)
    if not hasattr(self, "phantom_terminated_at"):
        self.phantom_terminated_at = time.monotonic()
    return previous


def forget(backend) -> None:
    # Drops the VMs terminated longer ago than the window, their tags and emptied reservations.
    limit = time.monotonic() - FORGET_AFTER
    for rid, reservation in list(backend.reservations.items()):
        old = [
            i
            for i in reservation.instances
            if getattr(i, "phantom_terminated_at", limit + 1) <= limit
        ]
        if not old:
            continue
        for instance in old:
            reservation.instances.remove(instance)
            backend.tags.pop(instance.id, None)
        if not reservation.instances:
            del backend.reservations[rid]


all_reservations = InstanceBackend.all_reservations


def exact(values) -> bool:
    return not any(c in v for v in values for c in "*?")


def all_reservations_remembered(self, filters=None):
    forget(self)
    tags = {k[4:]: set(v) for k, v in (filters or {}).items() if k.startswith("tag:") and exact(v)}
    ids = set(filters["instance-id"]) if exact((filters or {}).get("instance-id", ["*"])) else None
    if not tags and ids is None:
        return all_reservations(self, filters)

    def may_match(i) -> bool:
        own = self.tags.get(i.id, {})
        return (ids is None or i.id in ids) and all(own.get(k) in v for k, v in tags.items())

    kept = [
        copy.copy(r) for r in self.reservations.values() if any(may_match(i) for i in r.instances)
    ]
    return filter_reservations(kept, filters)


def get_instance(self, instance_id):
    # moto's copies every reservation to find one VM; this reads them in place.
    forget(self)
    for reservation in self.reservations.values():
        for instance in reservation.instances:
            if instance.id == instance_id:
                return instance
    raise InvalidInstanceIdError(instance_id)


TaggedEC2Resource.get_tags = get_tags
backends.list_of_moto_modules = functools.cache(
    lambda modules=backends.list_of_moto_modules: tuple(modules())
)
Instance.terminate = terminate_and_stamp
InstanceBackend.all_reservations = all_reservations_remembered
InstanceBackend.get_instance = get_instance

if __name__ == "__main__":
    sys.exit(main())
