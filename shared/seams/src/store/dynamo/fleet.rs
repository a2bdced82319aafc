//! The instance records, the provisioner's leases, the records of a round and the activities.

use super::*;

#[async_trait]
impl Fleet for DynamoStore {
    async fn take_lease(&self, claim: Claim<'_>) -> StoreResult<Lease> {
        let Claim { user, group, .. } = claim;
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{group}"))))
            .update_expression("SET lease_owner = :h, lease_until = :until")
            .condition_expression(
                "attribute_exists(pk) AND (attribute_not_exists(lease_until) OR lease_until < :now OR lease_owner = :h)",
            )
            .expression_attribute_values(":h", s(claim.holder))
            .expression_attribute_values(":until", n(claim.until_ms()))
            .expression_attribute_values(":now", n(claim.now_ms))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew)
            .return_values_on_condition_check_failure(
                aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure::AllOld,
            )
            .send()
            .await;
        match result {
            Ok(out) => {
                // ReturnValues ALL_NEW: the group as the lease left it.
                let item = out.attributes.ok_or_else(|| {
                    StoreError::Unavailable("the lease's update returned no group".into())
                })?;
                Ok(Lease::Taken(Box::new(Self::group_from(&item)?)))
            }
            Err(e) => {
                let Some(aws_sdk_dynamodb::operation::update_item::UpdateItemError::ConditionalCheckFailedException(c)) = e.as_service_error() else {
                    return Err(unavailable(e));
                };
                // ReturnValuesOnConditionCheckFailure ALL_OLD: the group and its lease, if any.
                let item = match c.item() {
                    Some(item) => Some(item.clone()),
                    None => self.get(owner(user), format!("{ASG}{group}")).await?,
                };
                let Some(item) = item else {
                    return Ok(Lease::NoGroup);
                };
                Ok(Lease::Busy {
                    until_ms: get_n(&item, "lease_until")?,
                })
            }
        }
    }

    async fn renew_lease(&self, claim: Claim<'_>) -> StoreResult<bool> {
        let result = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(
                owner(claim.user),
                format!("{ASG}{}", claim.group),
            )))
            .update_expression("SET lease_until = :until")
            .condition_expression("lease_owner = :h")
            .expression_attribute_values(":h", s(claim.holder))
            .expression_attribute_values(":until", n(claim.until_ms()))
            .send()
            .await;
        match conditional(result, StoreError::Conflict) {
            Ok(()) => Ok(true),
            Err(StoreError::Conflict) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn release_lease(
        &self,
        user: &str,
        name: &str,
        holder: &str,
        seen: Option<&Group>,
    ) -> StoreResult<()> {
        let update = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{name}"))))
            .expression_attribute_values(":h", s(holder));
        let update = match seen {
            // The asks it read are answered, if no other came since.
            Some(g) if g.asks == 0 => update
                .update_expression("REMOVE lease_owner, lease_until")
                .condition_expression(
                    "lease_owner = :h AND version = :v AND attribute_not_exists(ask_n)",
                )
                .expression_attribute_values(":v", n(g.version)),
            Some(g) => update
                .update_expression("REMOVE lease_owner, lease_until, ask_pk, ask_at, ask_n")
                .condition_expression("lease_owner = :h AND version = :v AND ask_n = :asks")
                .expression_attribute_values(":v", n(g.version))
                .expression_attribute_values(":asks", n(g.asks)),
            None => update
                .update_expression("REMOVE lease_owner, lease_until")
                .condition_expression("lease_owner = :h"),
        };
        conditional(update.send().await, StoreError::Conflict)
    }

    async fn instances(&self, user: &str, group: &str) -> StoreResult<Vec<Member>> {
        let items = self
            .query_prefix(
                &owner(user),
                &format!("{INST}{group}#"),
                None,
                usize::MAX,
                |_| true,
            )
            .await?;
        // The prefix also holds the instances of a group named `<group>#...`.
        let mut out = Vec::new();
        for item in &items {
            let (g, m) = Self::instance_from(item)?;
            if g == group {
                out.push(m);
            }
        }
        Ok(out)
    }

    async fn instances_between(
        &self,
        user: &str,
        first: &str,
        last: &str,
    ) -> StoreResult<Vec<(String, Member)>> {
        // Keys are `INST#<group>#<id>`: every group named from `first` on sorts at or after
        // `INST#<first>`. Above, a name that is a prefix of `last` followed by a character below
        // `#` (a space, `!`, `"`) would sort after `INST#<last>...`; cutting `last` before its first
        // such character makes the bound cover every name up to `last`. The names are checked below.
        let cut = last.find(|c: char| c <= '#').unwrap_or(last.len());
        let values = HashMap::from([
            (":pk".to_string(), s(owner(user))),
            (":lo".to_string(), s(format!("{INST}{first}"))),
            (
                ":hi".to_string(),
                s(format!("{INST}{}\u{10FFFF}", &last[..cut])),
            ),
        ]);
        let query = self
            .db
            .query()
            .table_name(&self.table)
            .key_condition_expression("pk = :pk AND sk BETWEEN :lo AND :hi")
            .set_expression_attribute_values(Some(values))
            .consistent_read(true);
        let mut out = Vec::new();
        Self::each_page(query, |items| {
            for item in items {
                let (g, m) = Self::instance_from(item)?;
                if first <= g.as_str() && g.as_str() <= last {
                    out.push((g, m));
                }
            }
            Ok(true)
        })
        .await?;
        // By group then id, as the other readers (the cut above can reorder names).
        out.sort_by(|a, b| (&a.0, &a.1.id).cmp(&(&b.0, &b.1.id)));
        Ok(out)
    }

    async fn all_instances(&self, user: &str) -> StoreResult<Vec<(String, Member)>> {
        self.query_prefix(&owner(user), INST, None, usize::MAX, |_| true)
            .await?
            .iter()
            .map(Self::instance_from)
            .collect()
    }

    async fn record(&self, user: &str, g: &Group, r: &Record) -> StoreResult<()> {
        if r.is_empty() {
            return Ok(());
        }
        let mut writes = Vec::new();
        for m in &r.put {
            writes.push(
                TransactWriteItem::builder()
                    .put(self.instance_put(user, g, m)?)
                    .build(),
            );
        }
        for id in &r.forget {
            let delete = Delete::builder()
                .table_name(&self.table)
                .set_key(Some(key(owner(user), format!("{INST}{}#{id}", g.name))))
                .build()
                .map_err(unavailable)?;
            writes.push(TransactWriteItem::builder().delete(delete).build());
        }
        for a in &r.activities {
            writes.push(
                TransactWriteItem::builder()
                    .put(self.activity_put(user, a)?)
                    .build(),
            );
        }
        for notice in &r.notices {
            writes.push(
                TransactWriteItem::builder()
                    .put(self.notice_put(user, &g.name, notice)?)
                    .build(),
            );
        }
        for l in &r.launches {
            let put = Put::builder()
                .table_name(&self.table)
                .set_item(Some(self.launch_item(user, &g.name, l)?))
                .build()
                .map_err(unavailable)?;
            writes.push(TransactWriteItem::builder().put(put).build());
        }
        // One transaction of up to 100 writes, each led by the group's guard (the first one also
        // moves the launch sequence and the backoff): a round's record is one request.
        let mut chunks = writes.chunks(99).peekable();
        let mut first = true;
        while first || chunks.peek().is_some() {
            let guard = if first {
                self.record_guard(user, g, r)?
            } else {
                TransactWriteItem::builder()
                    .condition_check(self.group_check(user, g)?)
                    .build()
            };
            let mut tx = self.db.transact_write_items().transact_items(guard);
            for w in chunks.next().into_iter().flatten() {
                tx = tx.transact_items(w.clone());
            }
            if let Err(e) = tx.send().await {
                return match cancelled_conditions(&e).as_deref() {
                    Some([true, ..]) => Err(self.why_guard_failed(user, g).await?),
                    // An instance record changed since it was read.
                    Some(c) if c.contains(&true) => Err(StoreError::Conflict),
                    _ => Err(unavailable(e)),
                };
            }
            first = false;
        }
        Ok(())
    }

    async fn notices(&self, user: &str, group: &str) -> StoreResult<Vec<Notice>> {
        self.group_items(user, NOTE, group)
            .await?
            .iter()
            .map(|i| {
                Ok(Notice {
                    id: get_s(i, "id")?,
                    at_ms: get_n(i, "at")?,
                    target: get_s(i, "target")?,
                    subject: i.get("subject").map(|_| get_s(i, "subject")).transpose()?,
                    body: get_s(i, "body")?,
                })
            })
            .collect()
    }

    async fn sent(&self, user: &str, group: &str, id: &str) -> StoreResult<()> {
        self.db
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{NOTE}{group}#{id}"))))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn put_launch(&self, user: &str, group: &str, l: &SyncLaunch) -> StoreResult<()> {
        let item = self.launch_item(user, group, l)?;
        let result = self
            .db
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", PARTITION_KEY)
            .send()
            .await;
        conditional(result, StoreError::Exists)
    }

    async fn launches(&self, user: &str, group: &str) -> StoreResult<Vec<SyncLaunch>> {
        self.group_items(user, LAUNCH, group)
            .await?
            .iter()
            .map(|i| {
                serde_json::from_str(&get_s(i, "doc")?)
                    .map_err(|_| corrupt(i, "doc", "a LaunchInstances request"))
            })
            .collect()
    }

    async fn beat(&self, user: &str, group: &str, instance: &str, at_ms: i64) -> StoreResult<()> {
        let mut item = key(owner(user), format!("{BEAT}{group}#{instance}"));
        item.insert("group".into(), s(group));
        item.insert("at".into(), n(at_ms));
        item.insert(TTL_ATTRIBUTE.into(), n(at_ms / 1000 + BEAT_TTL_SECS));
        self.db
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    async fn beats(&self, user: &str, group: &str) -> StoreResult<Vec<(String, i64)>> {
        self.group_items(user, BEAT, group)
            .await?
            .iter()
            .map(|i| {
                let rest = sk_suffix(i, BEAT)?;
                let id = rest
                    .strip_prefix(&format!("{group}#"))
                    .ok_or_else(|| corrupt(i, SORT_KEY, "a heartbeat's key"))?;
                Ok((id.to_string(), get_n(i, "at")?))
            })
            .collect()
    }

    async fn watched(&self) -> StoreResult<Vec<Watched>> {
        // Eventually consistent: the list only says where to look; a pair a moment late in it is
        // looked at by the next beat, and a view a moment old only asks for one sweep more.
        self.query_prefix_read(WATCH, "", None, usize::MAX, |_| true, false)
            .await?
            .iter()
            .map(|i| {
                let view = match opt_s(i, "view_fp")? {
                    Some(fingerprint) => Some(PairView {
                        fingerprint,
                        busy: get_bool(i, "view_busy")?,
                        empty_since_ms: opt_n(i, "view_empty_since")?,
                    }),
                    None => None,
                };
                Ok(Watched {
                    user: get_s(i, "user")?,
                    cloud: get_s(i, "cloud")?,
                    groups: get_n(i, "groups")?,
                    view,
                })
            })
            .collect()
    }

    async fn asked(&self, at_ms: i64) -> StoreResult<Vec<(String, String)>> {
        let asks = (ASK_INDEX, ASK_PARTITION, ASK_SORT);
        self.listed_by_time(asks, ASK, at_ms, ASG).await
    }

    async fn ask(&self, user: &str, name: &str, at_ms: i64) -> StoreResult<()> {
        let mut update = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{name}"))))
            .update_expression(format!("SET {ASK_SET}{ASK_ADD}"))
            .condition_expression("attribute_exists(pk)");
        for (name, value) in ask_values(at_ms) {
            update = update.expression_attribute_values(name, value);
        }
        conditional(update.send().await, StoreError::NotFound)
    }

    async fn due(&self, now_ms: i64) -> StoreResult<Vec<(String, String)>> {
        // The index is eventually consistent: the scheduler reads each group itself before it
        // fires anything.
        self.due_in(DUE, now_ms, ASG).await
    }

    async fn unwatch(&self, user: &str, cloud: &str) -> StoreResult<()> {
        let result = self
            .db
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(watch_key(user, cloud)))
            .condition_expression("attribute_not_exists(pk) OR #groups <= :zero")
            .expression_attribute_names("#groups", "groups")
            .expression_attribute_values(":zero", n(0))
            .send()
            .await;
        conditional(result, StoreError::Conflict)
    }

    async fn owners_of(&self, instance_id: &str) -> StoreResult<Vec<(String, String)>> {
        // The index is eventually consistent: a VM recorded a moment ago may be missing, and its
        // round, not an event, looks at it then.
        let page = self
            .db
            .query()
            .table_name(&self.table)
            .index_name(VM_INDEX)
            .key_condition_expression("#vm = :vm")
            .expression_attribute_names("#vm", VM_PARTITION)
            .expression_attribute_values(":vm", s(instance_id))
            .send()
            .await
            .map_err(unavailable)?;
        page.items()
            .iter()
            .map(|item| {
                let user = get_s(item, PARTITION_KEY)?;
                let user = user
                    .strip_prefix("OWNER#")
                    .ok_or_else(|| corrupt(item, PARTITION_KEY, "an owner"))?;
                let rest = sk_suffix(item, INST)?;
                let group = rest
                    .strip_suffix(&format!("#{instance_id}"))
                    .ok_or_else(|| corrupt(item, SORT_KEY, "an instance's key"))?;
                Ok((user.to_string(), group.to_string()))
            })
            .collect()
    }

    async fn set_view(&self, user: &str, cloud: &str, view: &PairView) -> StoreResult<()> {
        let mut update = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(watch_key(user, cloud)))
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":fp", s(&view.fingerprint))
            .expression_attribute_values(":busy", AttributeValue::Bool(view.busy));
        update = match view.empty_since_ms {
            Some(ms) => update
                .update_expression("SET view_fp = :fp, view_busy = :busy, view_empty_since = :e")
                .expression_attribute_values(":e", n(ms)),
            None => update
                .update_expression("SET view_fp = :fp, view_busy = :busy REMOVE view_empty_since"),
        };
        let result = update.send().await;
        conditional(result, StoreError::NotFound)
    }

    async fn pulse(&self) -> StoreResult<Option<PulseLease>> {
        match self.get(PULSE.into(), PULSE.into()).await? {
            None => Ok(None),
            Some(i) => Ok(Some(PulseLease {
                seq: u64::try_from(get_n(&i, "seq")?)
                    .map_err(|_| corrupt(&i, "seq", "a sequence of 0 or more"))?,
                until_ms: get_n(&i, "until_ms")?,
            })),
        }
    }

    async fn put_pulse(&self, expect: u64, lease: &PulseLease) -> StoreResult<()> {
        let seq = |v: u64| n(i64::try_from(v).unwrap_or(i64::MAX));
        let mut put = self
            .db
            .put_item()
            .table_name(&self.table)
            .item("pk", s(PULSE))
            .item("sk", s(PULSE))
            .item("seq", seq(lease.seq))
            .item("until_ms", n(lease.until_ms));
        put = if expect == 0 {
            put.condition_expression("attribute_not_exists(pk) OR seq = :expect")
        } else {
            put.condition_expression("seq = :expect")
        }
        .expression_attribute_values(":expect", seq(expect));
        conditional(put.send().await, StoreError::Conflict)
    }

    async fn activities(
        &self,
        user: &str,
        group: Option<&str>,
        after: Option<&str>,
        want: usize,
    ) -> StoreResult<Vec<(String, ScalingActivity)>> {
        let prefix = match group {
            Some(g) => format!("{ACT}{g}#"),
            None => ACT.to_string(),
        };
        let items = self
            .query_prefix(&owner(user), &prefix, after, want, |i| {
                group.is_none()
                    || sk_suffix(i, &prefix).is_ok_and(|k| crate::store::activity_of_group(&k))
            })
            .await?;
        items
            .iter()
            .map(|i| Ok((sk_suffix(i, &prefix)?, get_typed(i, "an activity")?)))
            .collect()
    }
}

impl DynamoStore {
    pub(super) fn instance_from(item: &Item) -> StoreResult<(String, Member)> {
        let lifecycle = get_s(item, "lifecycle")?;
        Ok((
            get_s(item, "group")?,
            Member {
                id: get_s(item, "id")?,
                cloud: get_s(item, "cloud")?,
                zone: get_s(item, "zone")?,
                subnet: opt_s(item, "subnet")?,
                lifecycle: Lifecycle::parse(&lifecycle)
                    .ok_or_else(|| corrupt(item, "lifecycle", "a lifecycle state"))?,
                healthy: get_bool(item, "healthy")?,
                launched_ms: get_n(item, "launched")?,
                joined_ms: opt_n(item, "joined")?,
                replaces_ms: opt_n(item, "replaces")?,
                at_risk_ms: opt_n(item, "at_risk")?,
                probe_failed: opt_s(item, "probe_failed")?,
                unhealthy_check: opt_s(item, "unhealthy_check")?,
                weight: opt_n(item, "weight")?,
                protected: get_bool(item, "protected")?,
                // Absent for a VM launched from no launch configuration ("" before 2026-11).
                launch_configuration: opt_s(item, "lc")?.filter(|lc| !lc.is_empty()),
                launch_template: match opt_s(item, "lt")? {
                    Some(lt) => Some(
                        serde_json::from_str(&lt)
                            .map_err(|_| corrupt(item, "lt", "a launch template"))?,
                    ),
                    None => None,
                },
                launched_from: match opt_s(item, "lt_from")? {
                    Some(lt) => Some(
                        serde_json::from_str(&lt)
                            .map_err(|_| corrupt(item, "lt_from", "a launch template"))?,
                    ),
                    None => None,
                },
                instance_type: get_s(item, "itype")?,
                // Absent on a VM recorded before spot (2026-11): those were all on-demand.
                market: match opt_s(item, "market")? {
                    Some(m) => {
                        Market::parse(&m).ok_or_else(|| corrupt(item, "market", "a market"))?
                    }
                    None => Market::OnDemand,
                },
                waits: serde_json::from_str(&get_s(item, "waits")?)
                    .map_err(|_| corrupt(item, "waits", "a list of lifecycle waits"))?,
                open: match opt_s(item, "leaving")? {
                    Some(a) => Some(
                        serde_json::from_str(&a)
                            .map_err(|_| corrupt(item, "leaving", "an activity"))?,
                    ),
                    None => None,
                },
                rev: get_n(item, "rev")?,
            },
        ))
    }

    pub(super) fn instance_put(&self, user: &str, g: &Group, m: &Member) -> StoreResult<Put> {
        let mut put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(owner(user), format!("{INST}{}#{}", g.name, m.id))))
            .item("group", s(&g.name))
            .item("gid", s(&g.id))
            .item("id", s(&m.id))
            // The key of the index `vms`: whose VM a cloud's state-change event names.
            .item(VM_PARTITION, s(&m.id))
            .item("zone", s(&m.zone))
            .item("lifecycle", s(m.lifecycle.as_str()))
            .item("healthy", AttributeValue::Bool(m.healthy))
            .item("launched", n(m.launched_ms))
            .item("protected", AttributeValue::Bool(m.protected))
            .item("itype", s(&m.instance_type))
            .item("market", s(m.market.as_str()))
            .item("cloud", s(&m.cloud))
            .item(
                "waits",
                s(serde_json::to_string(&m.waits).expect("waits serialize")),
            )
            .item("rev", n(m.rev + 1));
        if let Some(joined) = m.joined_ms {
            put = put.item("joined", n(joined));
        }
        if let Some(replaces) = m.replaces_ms {
            put = put.item("replaces", n(replaces));
        }
        if let Some(at_risk) = m.at_risk_ms {
            put = put.item("at_risk", n(at_risk));
        }
        if let Some(why) = &m.probe_failed {
            put = put.item("probe_failed", s(why.as_str()));
        }
        if let Some(check) = &m.unhealthy_check {
            put = put.item("unhealthy_check", s(check.as_str()));
        }
        if let Some(a) = &m.open {
            put = put.item(
                "leaving",
                s(serde_json::to_string(a).expect("an activity serialises")),
            );
        }
        if let Some(weight) = m.weight {
            put = put.item("weight", n(weight));
        }
        if let Some(lc) = &m.launch_configuration {
            put = put.item("lc", s(lc));
        }
        if let Some(lt) = &m.launch_template {
            put = put.item(
                "lt",
                s(serde_json::to_string(lt).expect("a template serializes")),
            );
        }
        if let Some(v) = &m.subnet {
            put = put.item("subnet", s(v));
        }
        if let Some(lt) = &m.launched_from {
            put = put.item(
                "lt_from",
                s(serde_json::to_string(lt).expect("a template serializes")),
            );
        }
        // Conditional on the record as it was read: new, or still at the revision read.
        let put = if m.rev == 0 {
            put.condition_expression("attribute_not_exists(pk)")
        } else {
            put.condition_expression("rev = :rev")
                .expression_attribute_values(":rev", n(m.rev))
        };
        put.build().map_err(unavailable)
    }

    pub(super) fn activity_put(&self, user: &str, a: &Activity) -> StoreResult<Put> {
        let mut item = key(owner(user), format!("{ACT}{}", activity_key(a)?));
        item.insert(
            "doc".into(),
            s(serde_json::to_string(&a.doc).expect("an activity serialises")),
        );
        item.insert("start".into(), n(a.start_ms));
        item.insert(
            TTL_ATTRIBUTE.into(),
            n(a.start_ms / 1000 + ACTIVITY_TTL_SECS),
        );
        Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .build()
            .map_err(unavailable)
    }

    pub(super) fn notice_put(&self, user: &str, group: &str, n: &Notice) -> StoreResult<Put> {
        let mut item = key(owner(user), format!("{NOTE}{group}#{}", n.id));
        item.insert("group".into(), s(group));
        item.insert("id".into(), s(&n.id));
        item.insert("at".into(), self::n(n.at_ms));
        item.insert("target".into(), s(&n.target));
        if let Some(subject) = &n.subject {
            item.insert("subject".into(), s(subject));
        }
        item.insert("body".into(), s(&n.body));
        item.insert(
            TTL_ATTRIBUTE.into(),
            self::n(n.at_ms / 1000 + NOTICE_TTL_SECS),
        );
        Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .build()
            .map_err(unavailable)
    }

    /// The user's items of `kind` (`NOTE#`, `LAUNCH#`) of group `group`.
    async fn group_items(&self, user: &str, kind: &str, group: &str) -> StoreResult<Vec<Item>> {
        self.query_prefix(
            &owner(user),
            &format!("{kind}{group}#"),
            None,
            usize::MAX,
            // The prefix also holds the items of a group named `<group>#...`.
            |i| get_s(i, "group").is_ok_and(|g| g == group),
        )
        .await
    }

    /// A LaunchInstances request's item: the group, the request as a document, its TTL.
    pub(super) fn launch_item(&self, user: &str, group: &str, l: &SyncLaunch) -> StoreResult<Item> {
        let mut item = key(owner(user), format!("{LAUNCH}{group}#{}", l.client_token));
        item.insert("group".into(), s(group));
        item.insert(
            "doc".into(),
            s(serde_json::to_string(l).map_err(|e| StoreError::Unavailable(e.to_string()))?),
        );
        item.insert(
            TTL_ATTRIBUTE.into(),
            self::n(l.asked_ms / 1000 + LAUNCH_TTL_SECS),
        );
        Ok(item)
    }

    /// The guard on the first transaction of a record: the group is still this one (by id), and
    /// the launch sequence and backoff change with it.
    pub(super) fn record_guard(
        &self,
        user: &str,
        g: &Group,
        r: &Record,
    ) -> StoreResult<TransactWriteItem> {
        let group_key = key(owner(user), format!("{ASG}{}", g.name));
        let mut sets = Vec::new();
        let mut update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(group_key.clone()))
            .expression_attribute_values(":gid", s(&g.id));
        let mut condition = "gid = :gid".to_string();
        if let Some(next) = r.launch_seq {
            sets.push("launch_seq = :next");
            condition.push_str(" AND (attribute_not_exists(launch_seq) OR launch_seq = :seq)");
            update = update
                .expression_attribute_values(":seq", n(g.launch_seq))
                .expression_attribute_values(":next", n(next));
        }
        if let Some(d) = r.desired {
            sets.push("desired = :d, version = version + :one");
            condition.push_str(" AND version = :v");
            update = update
                .expression_attribute_values(":d", n(d))
                .expression_attribute_values(":one", n(1))
                .expression_attribute_values(":v", n(g.version));
        }
        if let Some(Backoff {
            failures,
            retry_at_ms,
        }) = r.backoff
        {
            sets.push("failures = :f, retry_at = :r");
            update = update
                .expression_attribute_values(":f", n(failures))
                .expression_attribute_values(":r", n(retry_at_ms));
        }
        if let Some(unreplaced) = &r.unreplaced {
            sets.push("unreplaced = :u");
            update = update.expression_attribute_values(
                ":u",
                s(serde_json::to_string(unreplaced).expect("numbers serialize")),
            );
        }
        if let Some(holds) = &r.holds {
            sets.push("holds = :h");
            update = update.expression_attribute_values(
                ":h",
                s(serde_json::to_string(holds).expect("holds serialize")),
            );
        }
        if let Some(at) = r.ask_ms {
            sets.push(ASK_SET);
            for (name, value) in ask_values(at) {
                update = update.expression_attribute_values(name, value);
            }
        }
        let count = counts(r.ask_ms);
        if sets.is_empty() {
            return Ok(TransactWriteItem::builder()
                .condition_check(self.group_check(user, g)?)
                .build());
        }
        let update = update
            .update_expression(format!("SET {}{count}", sets.join(", ")))
            .condition_expression(condition)
            .build()
            .map_err(unavailable)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}
