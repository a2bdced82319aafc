//! Groups: created, changed and deleted as compare-and-sets, with the in-use marks, the usage counts
//! and the health check's list moved in the same transactions.

use super::*;
use phantom_rules::group::GroupRules;

#[async_trait]
impl Groups for DynamoStore {
    async fn create_group(&self, user: &str, g: &Group, ask: Ask) -> StoreResult<()> {
        let mut put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .item("cloud", s(&g.cloud))
            .item("min", n(g.min))
            .item("max", n(g.max))
            .item("desired", n(g.desired))
            .item("version", n(g.version))
            .item("gid", s(&g.id))
            .item("doc", s(settings_json(&g.settings)))
            .condition_expression("attribute_not_exists(pk)");
        if let Some(at) = ask {
            put = put
                .item(ASK_PARTITION, s(ASK))
                .item(ASK_SORT, n(at))
                .item(ASK_COUNT, n(1));
        }
        let put = put.build().map_err(unavailable)?;
        let mut tx = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().put(put).build());
        // Every launch configuration the group uses is marked (a template group has none).
        let lcs = g.launch_configurations()?;
        for lc in &lcs {
            tx = tx.transact_items(self.lc_mark(user, lc, &g.name, "ADD")?);
        }
        let marks = lcs.len();
        for cloud in g.clouds()? {
            tx = tx.transact_items(self.count_group(user, &cloud, 1)?);
        }
        let result = tx
            .transact_items(self.count_usage(user, "groups", 1, MAX_GROUPS)?)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e).as_deref() {
                Some([true, ..]) => Err(StoreError::Exists),
                Some(c) if c.iter().skip(1).take(marks).any(|x| *x) => Err(StoreError::NotFound),
                // The usage count is the last write.
                Some(c) if c.last() == Some(&true) => Err(StoreError::Limit),
                _ => Err(unavailable(e)),
            },
        }
    }

    async fn group(&self, user: &str, name: &str) -> StoreResult<Option<Group>> {
        self.get(owner(user), format!("{ASG}{name}"))
            .await?
            .as_ref()
            .map(Self::group_from)
            .transpose()
    }

    async fn groups(
        &self,
        user: &str,
        page: Page<'_>,
        keep: GroupFilter<'_>,
    ) -> StoreResult<Vec<Group>> {
        // An unreadable item passes the filter here and fails loudly below.
        let items = self
            .page_of(user, ASG, page, |i| {
                Self::group_from(i).map_or(true, |g| keep(&g))
            })
            .await?;
        let mut groups = Vec::new();
        for item in &items {
            let g = Self::group_from(item)?;
            if keep(&g) {
                groups.push(g);
            }
        }
        Ok(in_order(groups, |g| &g.name, page.want))
    }

    async fn set_desired(&self, user: &str, g: &Group, desired: i64, ask: Ask) -> StoreResult<()> {
        let mut update = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .update_expression(format!(
                "SET desired = :d, version = version + :one{}{}",
                asks(ask),
                counts(ask)
            ))
            .condition_expression("gid = :gid AND version = :v")
            .expression_attribute_values(":d", n(desired))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":gid", s(&g.id))
            .expression_attribute_values(":v", n(g.version));
        for (name, value) in ask.map(ask_values).into_iter().flatten() {
            update = update.expression_attribute_values(name, value);
        }
        let result = update.send().await;
        conditional(result, StoreError::Conflict)
    }

    async fn update_group_with(
        &self,
        user: &str,
        old: &Group,
        new: &Group,
        activities: &[Activity],
        ask: Ask,
    ) -> StoreResult<()> {
        // The index of due groups follows the group's scheduled actions.
        let due = match new.due_ms() {
            Some(_) => ", due_pk = :due_pk, due = :due",
            None => " REMOVE due_pk, due",
        };
        let ask_set = asks(ask);
        let mut update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", old.name))))
            .update_expression(format!(
                "SET #min = :min, #max = :max, desired = :d, doc = :doc, version = version + :one{ask_set}{due}{}",
                counts(ask)
            ))
            .condition_expression("gid = :gid AND version = :v")
            .expression_attribute_values(":gid", s(&old.id))
            .expression_attribute_names("#min", "min")
            .expression_attribute_names("#max", "max")
            .expression_attribute_values(":min", n(new.min))
            .expression_attribute_values(":max", n(new.max))
            .expression_attribute_values(":d", n(new.desired))
            .expression_attribute_values(":doc", s(settings_json(&new.settings)))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":v", n(old.version));
        if let Some(at) = new.due_ms() {
            update = update
                .expression_attribute_values(":due_pk", s(DUE))
                .expression_attribute_values(":due", n(at));
        }
        for (name, value) in ask.map(ask_values).into_iter().flatten() {
            update = update.expression_attribute_values(name, value);
        }
        let update = update.build().map_err(unavailable)?;
        let mut tx = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().update(update).build());
        // The in-use marks move with the launch configurations the group uses (a template group
        // has none); the new ones come first so that the absence of one reads as NotFound.
        let (before, after) = (old.launch_configurations()?, new.launch_configurations()?);
        for lc in after.difference(&before) {
            tx = tx.transact_items(self.lc_mark(user, lc, &old.name, "ADD")?);
        }
        for lc in before.difference(&after) {
            tx = tx.transact_items(self.lc_mark(user, lc, &old.name, "DELETE")?);
        }
        // The health check's list counts the group on each of its clouds.
        let (was, now) = (old.clouds()?, new.clouds()?);
        for cloud in now.difference(&was) {
            tx = tx.transact_items(self.count_group(user, cloud, 1)?);
        }
        for cloud in was.difference(&now) {
            tx = tx.transact_items(self.count_group(user, cloud, -1)?);
        }
        // Last, so that a failed condition above keeps its position.
        for a in activities {
            tx = tx.transact_items(
                TransactWriteItem::builder()
                    .put(self.activity_put(user, a)?)
                    .build(),
            );
        }
        match tx.send().await {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e).as_deref() {
                Some([true, ..]) => Err(StoreError::Conflict),
                Some(c) if c.iter().skip(1).any(|x| *x) => Err(StoreError::NotFound),
                _ => Err(unavailable(e)),
            },
        }
    }

    async fn begin_delete(&self, user: &str, g: &Group, ask: Ask) -> StoreResult<()> {
        let mut update = self
            .db
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .update_expression(format!(
                "SET #st = :d, desired = :zero, #min = :zero, version = version + :one{} REMOVE due_pk, due{}",
                asks(ask),
                counts(ask)
            ))
            .condition_expression("gid = :gid AND version = :v")
            .expression_attribute_values(":gid", s(&g.id))
            .expression_attribute_names("#st", "status")
            .expression_attribute_names("#min", "min")
            .expression_attribute_values(":d", s(DELETING))
            .expression_attribute_values(":zero", n(0))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":v", n(g.version));
        for (name, value) in ask.map(ask_values).into_iter().flatten() {
            update = update.expression_attribute_values(name, value);
        }
        let result = update.send().await;
        conditional(result, StoreError::Conflict)
    }

    async fn delete_group(&self, user: &str, g: &Group) -> StoreResult<()> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", g.name))))
            // The same group (a group deleted and made again under its name starts its versions
            // over), at the version read.
            .condition_expression("gid = :gid AND version = :v")
            .expression_attribute_values(":gid", s(&g.id))
            .expression_attribute_values(":v", n(g.version))
            .build()
            .map_err(unavailable)?;
        let mut tx = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().delete(delete).build());
        let lcs = g.launch_configurations()?;
        for lc in &lcs {
            tx = tx.transact_items(self.lc_mark(user, lc, &g.name, "DELETE")?);
        }
        let marks = lcs.len();
        for cloud in g.clouds()? {
            tx = tx.transact_items(self.count_group(user, &cloud, -1)?);
        }
        let result = tx
            .transact_items(self.count_usage(user, "groups", -1, MAX_GROUPS)?)
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e).as_deref() {
                Some([true, ..]) => Err(StoreError::Conflict),
                Some(c) if c.iter().skip(1).take(marks).any(|x| *x) => Err(StoreError::NotFound),
                _ => Err(unavailable(e)),
            },
        }
    }
}

impl DynamoStore {
    /// Marks a launch configuration as used (`ADD`) or no longer used (`DELETE`) by a group,
    /// inside a transaction; it must exist (an update of an absent item would create it).
    pub(super) fn lc_mark(
        &self,
        user: &str,
        lc: &str,
        group: &str,
        how: &str,
    ) -> StoreResult<TransactWriteItem> {
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{LC}{lc}"))))
            .update_expression(format!("{how} used_by :g"))
            .expression_attribute_values(":g", AttributeValue::Ss(vec![group.to_string()]))
            .condition_expression("attribute_exists(pk)")
            .build()
            .map_err(unavailable)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// Counts one of the user's groups or launch configurations (`what`: `groups`, `lcs`) on or
    /// off, inside the transaction that creates or deletes it; counting on is conditional on the
    /// count being under `max`.
    pub(super) fn count_usage(
        &self,
        user: &str,
        what: &str,
        by: i64,
        max: i64,
    ) -> StoreResult<TransactWriteItem> {
        let mut update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), USAGE.into())))
            .update_expression("ADD #n :by")
            .expression_attribute_names("#n", what)
            .expression_attribute_values(":by", n(by));
        if by > 0 {
            update = update
                .condition_expression("attribute_not_exists(#n) OR #n < :max")
                .expression_attribute_values(":max", n(max));
        }
        Ok(TransactWriteItem::builder()
            .update(update.build().map_err(unavailable)?)
            .build())
    }

    /// Counts a group on or off (user, cloud) on the health check's list, inside a transaction.
    pub(super) fn count_group(
        &self,
        user: &str,
        cloud: &str,
        by: i64,
    ) -> StoreResult<TransactWriteItem> {
        let update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(watch_key(user, cloud)))
            .update_expression("SET #u = :u, #c = :c ADD #groups :by")
            .expression_attribute_names("#u", "user")
            .expression_attribute_names("#c", "cloud")
            .expression_attribute_names("#groups", "groups")
            .expression_attribute_values(":u", s(user))
            .expression_attribute_values(":c", s(cloud))
            .expression_attribute_values(":by", n(by))
            .build()
            .map_err(unavailable)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// A record's guard failed: the group is gone (or another of the same name stands there), or
    /// its launch sequence moved.
    pub(super) async fn why_guard_failed(&self, user: &str, g: &Group) -> StoreResult<StoreError> {
        let now = self.get(owner(user), format!("{ASG}{}", g.name)).await?;
        Ok(match now {
            Some(item) if get_s(&item, "gid")? == g.id => StoreError::Conflict,
            _ => StoreError::NotFound,
        })
    }
}

impl DynamoStore {
    pub(super) fn group_from(item: &Item) -> StoreResult<Group> {
        Ok(Group {
            name: sk_suffix(item, ASG)?,
            cloud: get_s(item, "cloud")?,
            min: get_n(item, "min")?,
            max: get_n(item, "max")?,
            desired: get_n(item, "desired")?,
            version: get_n(item, "version")?,
            // Absent until the first launch, the first failure.
            launch_seq: opt_n(item, "launch_seq")?.unwrap_or(0),
            id: get_s(item, "gid")?,
            status: opt_s(item, "status")?,
            failures: opt_n(item, "failures")?.unwrap_or(0),
            retry_at_ms: opt_n(item, "retry_at")?.unwrap_or(0),
            // Absent until a launch first owes a replacement.
            unreplaced_ms: match opt_s(item, "unreplaced")? {
                Some(u) => serde_json::from_str(&u)
                    .map_err(|_| corrupt(item, "unreplaced", "a list of times"))?,
                None => Vec::new(),
            },
            // Absent until a group across clouds first has something to remember.
            holds: match opt_s(item, "holds")? {
                Some(h) => serde_json::from_str(&h)
                    .map_err(|_| corrupt(item, "holds", "the clouds' holds"))?,
                None => Default::default(),
            },
            // Absent while no ask waits for a round.
            asks: opt_n(item, ASK_COUNT)?.unwrap_or(0),
            settings: get_typed(item, "a group's settings")?,
        })
    }

    pub(super) fn group_check(&self, user: &str, g: &Group) -> StoreResult<ConditionCheck> {
        ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{ASG}{}", g.name))))
            .condition_expression("gid = :gid")
            .expression_attribute_values(":gid", s(&g.id))
            .build()
            .map_err(unavailable)
    }
}
