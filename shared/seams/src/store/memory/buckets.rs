//! Each account's shared request buckets.

use super::*;
use crate::store::Buckets;
use phantom_rules::throttle::{gcra, Take};

#[async_trait]
impl Buckets for MemoryStore {
    async fn take_tokens(
        &self,
        account: &str,
        class: &str,
        take: Take,
        now_us: i64,
        _idle: bool,
    ) -> StoreResult<bool> {
        let out = {
            let mut st = self.state(1);
            let id = (account.to_string(), class.to_string());
            match gcra(st.buckets.get(&id).copied(), take, now_us) {
                Ok(tat) => {
                    st.buckets.insert(id, tat);
                    true
                }
                Err(_) => false,
            }
        };
        self.done(Ok(out)).await
    }
}
