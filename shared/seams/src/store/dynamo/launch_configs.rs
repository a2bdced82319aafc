//! Launch configurations, each with the groups that use it (the in-use marks).

use super::*;

#[async_trait]
impl LaunchConfigs for DynamoStore {
    async fn create_launch_config(&self, user: &str, lc: &LaunchConfig) -> StoreResult<()> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(key(owner(user), format!("{LC}{}", lc.name))))
            .item("cloud", s(&lc.cloud))
            .item(
                "doc",
                s(serde_json::to_string(&lc.settings).expect("a launch configuration serialises")),
            )
            .condition_expression("attribute_not_exists(pk)")
            .build()
            .map_err(unavailable)?;
        // The cloud's registration is a condition of the write, not a read before it.
        let registered = ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(key(CLOUDS.into(), lc.cloud.clone())))
            .condition_expression("attribute_exists(pk)")
            .build()
            .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().put(put).build())
            .transact_items(self.count_usage(user, "lcs", 1, MAX_LAUNCH_CONFIGS)?)
            .transact_items(
                TransactWriteItem::builder()
                    .condition_check(registered)
                    .build(),
            )
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => match cancelled_conditions(&e).as_deref() {
                Some([_, _, true]) => Err(StoreError::NotFound),
                Some([true, ..]) => Err(StoreError::Exists),
                Some([_, true, _]) => Err(StoreError::Limit),
                _ => Err(unavailable(e)),
            },
        }
    }

    async fn usage(&self, user: &str) -> StoreResult<Usage> {
        let Some(item) = self.get(owner(user), USAGE.into()).await? else {
            return Ok(Usage::default());
        };
        // A count is added by the first write that needs it: absent means none yet.
        Ok(Usage {
            groups: opt_n(&item, "groups")?.unwrap_or(0),
            launch_configs: opt_n(&item, "lcs")?.unwrap_or(0),
        })
    }

    async fn delete_launch_config(&self, user: &str, name: &str) -> StoreResult<()> {
        let delete = Delete::builder()
            .table_name(&self.table)
            .set_key(Some(key(owner(user), format!("{LC}{name}"))))
            .condition_expression("attribute_exists(pk) AND attribute_not_exists(used_by)")
            .build()
            .map_err(unavailable)?;
        let result = self
            .db
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().delete(delete).build())
            .transact_items(self.count_usage(user, "lcs", -1, MAX_LAUNCH_CONFIGS)?)
            .send()
            .await;
        let Err(e) = result else {
            return Ok(());
        };
        if !matches!(cancelled_conditions(&e).as_deref(), Some([true, ..])) {
            return Err(unavailable(e));
        }
        // Absent, or in use: the item says which.
        match self.get(owner(user), format!("{LC}{name}")).await? {
            Some(old) => {
                let mut by = old
                    .get("used_by")
                    .and_then(|v| v.as_ss().ok())
                    .cloned()
                    .ok_or_else(|| corrupt(&old, "used_by", "a string set"))?;
                by.sort();
                Err(StoreError::InUse(by))
            }
            None => Err(StoreError::NotFound),
        }
    }

    async fn launch_config(&self, user: &str, name: &str) -> StoreResult<Option<LaunchConfig>> {
        self.get(owner(user), format!("{LC}{name}"))
            .await?
            .as_ref()
            .map(Self::launch_config_from)
            .transpose()
    }

    async fn launch_configs(&self, user: &str, page: Page<'_>) -> StoreResult<Vec<LaunchConfig>> {
        let items = self.page_of(user, LC, page, |_| true).await?;
        let lcs = items
            .iter()
            .map(Self::launch_config_from)
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(in_order(lcs, |lc| &lc.name, page.want))
    }
}

impl DynamoStore {
    pub(super) fn launch_config_from(item: &Item) -> StoreResult<LaunchConfig> {
        Ok(LaunchConfig {
            name: sk_suffix(item, LC)?,
            cloud: get_s(item, "cloud")?,
            settings: get_typed(item, "a launch configuration")?,
        })
    }
}
