#!/usr/bin/env python3
"""moto_server as the local stack runs it, with what grew with the VMs it holds taken out.

Usage is moto_server's: `python3 localstack/moto/serve.py -H 127.0.0.1 -p PORT`.

1. A resource's tags are read from the tag table by its id. moto 5.2 scans every tag of every
   resource with a regular expression to find one resource's tags, so a DescribeInstances of
   N VMs took N x N matches (3.0 s for 1,000 VMs).
2. VMs are found by id, and by exact tag values, from indexes kept beside moto's tables: a
   DescribeInstances by tag or instance id (Phantom's looks, a round's VMs ended since its list),
   a DescribeInstanceStatus, a TerminateInstances read only the VMs asked for, and an exact state
   filter drops an owner's terminated VMs first. moto read or copied every reservation for each
   (the terminated ones of the last hour too), and compiled a regular expression for each VM and
   filter.
3. A terminated VM is forgotten PHANTOM_CLOUD_FORGET_SECS after its termination (default 3600),
   as EC2 forgets it after about an hour; moto keeps every one for good. A forgotten id is
   InvalidInstanceID.NotFound, as on EC2.
4. moto's list of its own services is read once; its server listed its folder for each request
   (about 180 stat calls).
5. SendMessage reads the one queue attribute it needs (ContentBasedDeduplication). moto computed
   them all, the message counts among them, a walk of every message in the queue, so each send
   took longer as the work queue's delayed follow-ups piled up.
6. An answer's serializer works out once where each of its fields is read from. moto asked six
   alias rules, and matched the field's path against every transformer, for each field of each
   object (about 140 a VM): a DescribeInstances of 5 VMs took 11.9 ms of moto's CPU, 9.3 since.
7. DynamoDB's requests are served one at a time, and a refused transaction puts back only the
   items it named. moto's server threads interleaved a conditional write's check and its write,
   and a refused transaction put back a deep copy of each table it named, taken when it began:
   what other requests wrote meanwhile was lost (the e2e `paging` test lost a launch
   configuration), and each transaction copied the whole table.
"""

import collections
import copy
import functools
import itertools
import os
import sys
import threading
import time

from moto import backends
from moto.ec2.exceptions import InvalidInstanceIdError
from moto.ec2.models.core import TaggedEC2Resource
from moto.ec2.models.instances import Instance, InstanceBackend
from moto.ec2.models.tags import TagBackend
from moto.ec2.utils import EC2_PREFIX_TO_RESOURCE, filter_reservations, get_prefix
from moto.core.serialize import AttributePicker
from moto.core.utils import MISSING, get_value
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.table import Table
from moto.dynamodb.responses import DynamoHandler
from moto.server import main
from moto.sqs.models import Queue, SQSBackend


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


class Index:
    """One EC2 backend's VMs by id (with their reservation), its reservations' launch order,
    resources by (tag key, value), and its terminated VMs, oldest first."""

    def __init__(self):
        self.vms = {}
        self.launched = {}
        self.next_launch = itertools.count()
        self.tagged = collections.defaultdict(set)
        self.ended = collections.deque()


def index(backend) -> Index:
    found = backend.__dict__.get("phantom_index")
    if found is None:
        found = backend.__dict__["phantom_index"] = Index()
    return found


# 1. Tags by id.
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


# 2. The indexes, kept as moto's tables change.
create_tags = TagBackend.create_tags
delete_tags = TagBackend.delete_tags


def retag(backend, resource_ids, change):
    old = {rid: dict(backend.tags.get(rid, {})) for rid in resource_ids}
    result = change()
    tagged = index(backend).tagged
    for rid, before in old.items():
        after = backend.tags.get(rid, {})
        for k, v in before.items():
            if after.get(k) != v:
                tagged[(k, v)].discard(rid)
        for k, v in after.items():
            tagged[(k, v)].add(rid)
    return result


def create_tags_indexed(self, resource_ids, tags):
    return retag(self, resource_ids, lambda: create_tags(self, resource_ids, tags))


def delete_tags_indexed(self, resource_ids, tags):
    return retag(self, resource_ids, lambda: delete_tags(self, resource_ids, tags))


def find(backend, vm_id):
    """The VM's (reservation, instance), or None."""
    ix = index(backend)
    if vm_id not in ix.vms:
        # VMs are indexed as first asked for: RunInstances asks for its own before it returns.
        # The newest reservations are read until one is indexed already (so are all before it).
        fresh = []
        for r in reversed(backend.reservations.values()):
            new = [i for i in r.instances if i.id not in ix.vms]
            if not new:
                break
            for i in new:
                ix.vms[i.id] = (r, i)
            fresh.append(r.id)
        # Numbered in launch order, after every reservation indexed before them.
        for rid in reversed(fresh):
            ix.launched.setdefault(rid, next(ix.next_launch))
    if vm_id not in ix.vms:
        # Not among the newest: a reservation read while another thread's RunInstances was still
        # adding its VMs is behind newer ones now. Every reservation is read again, as moto would,
        # and numbered again in its order.
        for r in list(backend.reservations.values()):
            for i in r.instances:
                ix.vms.setdefault(i.id, (r, i))
        ix.launched = {rid: n for n, rid in enumerate(list(backend.reservations))}
        ix.next_launch = itertools.count(len(ix.launched))
    return ix.vms.get(vm_id)


def exact(values) -> bool:
    return not any(c in v for v in values for c in "*?")


all_reservations = InstanceBackend.all_reservations
moto_by_ids = InstanceBackend.get_reservations_by_instance_ids


def all_reservations_indexed(self, filters=None):
    forget(self)
    filters = filters or {}
    tags = [(k[4:], v) for k, v in filters.items() if k.startswith("tag:") and exact(v)]
    ids = filters.get("instance-id")
    if not tags and not (ids and exact(ids)):
        return all_reservations(self, filters or None)
    ix = index(self)
    wanted = None
    for key, values in tags:
        matching = set().union(*(ix.tagged.get((key, v), ()) for v in values))
        wanted = matching if wanted is None else wanted & matching
    if ids and exact(ids):
        wanted = set(ids) if wanted is None else wanted & set(ids)
    # An exact state filter first, so that an owner's terminated VMs cost a look nothing more.
    states = filters.get("instance-state-name")
    if states and not exact(states):
        states = None
    # Each reservation once, in moto's order (that of its launch), with moto's filters after.
    found = {}
    for vm in wanted:
        hit = find(self, vm)
        if hit is not None and (not states or hit[1].state in states):
            found[hit[0].id] = hit[0]
    kept = [copy.copy(r) for r in in_launch_order(self, found.values())]
    return filter_reservations(kept, filters)


def in_launch_order(backend, reservations):
    # moto's own order; one read before the index numbered it goes last.
    launched = index(backend).launched
    return sorted(reservations, key=lambda r: launched.get(r.id, len(launched)))


def get_reservations_by_instance_ids_indexed(self, instance_ids, filters=None):
    # moto's own (a DescribeInstances by id), its reservations read from the index, not all.
    forget(self)
    wanted = set(instance_ids)
    hits = {}
    for vm in wanted:
        hit = find(self, vm)
        if hit is not None:
            hits.setdefault(hit[0].id, hit[0])
    reservations = []
    for r in in_launch_order(self, hits.values()):
        r = copy.copy(r)
        r.instances = [i for i in r.instances if i.id in wanted]
        reservations.append(r)
    found = [i.id for r in reservations for i in r.instances]
    if len(found) != len(instance_ids):
        raise InvalidInstanceIdError(list(set(instance_ids).difference(set(found)))[0])
    if filters is not None:
        reservations = filter_reservations(reservations, filters)
    return reservations


def get_instance(self, instance_id):
    forget(self)
    found = find(self, instance_id)
    if found is None:
        raise InvalidInstanceIdError(instance_id)
    return found[1]


def get_multi_instances_by_id(self, instance_ids, filters=None):
    forget(self)
    found = {i: find(self, i) for i in instance_ids}
    missing = [i for i, hit in found.items() if hit is None]
    if missing:
        raise InvalidInstanceIdError(missing)
    return [found[i][1] for i in instance_ids if found[i][1].applies(filters)]


# 3. Terminated VMs forgotten.
terminate = Instance.terminate


def terminate_and_stamp(self):
    previous = terminate(self)
    if not hasattr(self, "phantom_terminated_at"):
        self.phantom_terminated_at = time.monotonic()
        index(self.ec2_backend).ended.append((self.phantom_terminated_at, self))
    return previous


def forget(backend) -> None:
    # Drops the VMs terminated longer ago than the window, their tags and emptied reservations.
    ix = index(backend)
    limit = time.monotonic() - FORGET_AFTER
    while ix.ended and ix.ended[0][0] <= limit:
        _, instance = ix.ended.popleft()
        reservation, _ = find(backend, instance.id) or (None, None)
        ix.vms.pop(instance.id, None)
        for k, v in backend.tags.pop(instance.id, {}).items():
            ix.tagged[(k, v)].discard(instance.id)
        if reservation is None:
            continue
        reservation.instances.remove(instance)
        if not reservation.instances:
            backend.reservations.pop(reservation.id, None)
            ix.launched.pop(reservation.id, None)


# 5. SendMessage without every queue attribute.
sending = threading.local()
all_attributes = Queue.attributes.fget


def attributes(self):
    if not getattr(sending, "now", False):
        return all_attributes(self)
    # What send_message reads: ContentBasedDeduplication, a FIFO queue's only ("true"/"false").
    if not self.fifo_queue:
        return {}
    value = self.content_based_deduplication
    return {"ContentBasedDeduplication": str(value).lower() if isinstance(value, bool) else value}


send_message = SQSBackend.send_message


def send_message_cheaply(self, *args, **kwargs):
    before = getattr(sending, "now", False)
    sending.now = True
    try:
        return send_message(self, *args, **kwargs)
    finally:
        sending.now = before


# 6. Where a field is read from depends on the object's class, the field and its shape (its parent
# included), never on the object itself: worked out once. A transformer is found by the field's
# path, again once per path (and per count of transformers, as moto adds some as it runs).
moto_pick = AttributePicker.__call__
keys_of = {}
transform_of = {}


def pick(self, context):
    shape = context.shape
    at = (type(context.obj), context.key, id(shape), id(getattr(shape, "parent", None)))
    found = keys_of.get(at)
    if found is None:
        if len(keys_of) > 100_000:
            keys_of.clear()
        # The shape and its parent kept with their keys, so their ids are not reused.
        found = (tuple(self.get_possible_keys(context)), shape, getattr(shape, "parent", None))
        keys_of[at] = found
    obj = context.obj
    for possible_key in found[0]:
        value = get_value(obj, possible_key, MISSING)
        if value is not MISSING:
            break
    else:
        value = None
    transformers = self.response_transformers
    if transformers:
        key_path = f"{context.key_path}.{context.key}"
        at = (id(transformers), len(transformers), key_path)
        path = transform_of.get(at, MISSING)
        if path is MISSING:
            if len(transform_of) > 100_000:
                transform_of.clear()
            path = next((p for p in transformers if key_path.endswith(p)), None)
            transform_of[at] = path
        if path is not None:
            value = transformers[path](value)
    return value


# 7. DynamoDB's requests one at a time; a refused transaction undoes its own items alone.
dynamodb_lock = threading.RLock()
moto_dynamodb_call = DynamoHandler.call_action


def dynamodb_call_one_at_a_time(self):
    with dynamodb_lock:
        return moto_dynamodb_call(self)


transacting = threading.local()
moto_transact = DynamoDBBackend.transact_write_items


def table_deepcopy(self, memo):
    # A transaction's backup of a whole table is the table itself: its items are put back below.
    if getattr(transacting, "now", False):
        return self
    return copy._reconstruct(self, memo, *self.__reduce_ex__(4))


def transact_write_items_by_item(self, transact_items):
    before = []
    for entry in transact_items:
        try:
            _, op = next(iter(entry.items()))
            table = self.get_table(op["TableName"])
            hash_key, range_key = self.get_keys_value(table, op.get("Item") or op["Key"])
        except Exception:
            # moto refuses such an entry before the transaction writes anything.
            continue
        kept = copy.deepcopy(table.get_item(hash_key, range_key))
        before.append((table, hash_key, range_key, kept))
    transacting.now = True
    try:
        return moto_transact(self, transact_items)
    except Exception:
        for table, hash_key, range_key, item in reversed(before):
            if item is None:
                table.delete_item(hash_key, range_key)
            elif range_key is None:
                table.items[hash_key] = item
            else:
                table.items[hash_key][range_key] = item
        raise
    finally:
        transacting.now = False


TaggedEC2Resource.get_tags = get_tags
TagBackend.create_tags = create_tags_indexed
TagBackend.delete_tags = delete_tags_indexed
InstanceBackend.all_reservations = all_reservations_indexed
InstanceBackend.get_instance = get_instance
InstanceBackend.get_reservations_by_instance_ids = get_reservations_by_instance_ids_indexed
InstanceBackend.get_multi_instances_by_id = get_multi_instances_by_id
Instance.terminate = terminate_and_stamp
# 4. The list of moto's services, read once.
backends.list_of_moto_modules = functools.cache(
    lambda modules=backends.list_of_moto_modules: tuple(modules())
)
Queue.attributes = property(attributes)
SQSBackend.send_message = send_message_cheaply
AttributePicker.__call__ = pick
DynamoHandler.call_action = dynamodb_call_one_at_a_time
Table.__deepcopy__ = table_deepcopy
DynamoDBBackend.transact_write_items = transact_write_items_by_item

if __name__ == "__main__":
    sys.exit(main())
