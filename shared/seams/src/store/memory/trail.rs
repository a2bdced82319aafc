//! Each account's audit trail.

use super::*;
use crate::store::{trail_key, Trail, TrailFilter};
use phantom_model::trail::TrailEvent;

#[async_trait]
impl Trail for MemoryStore {
    async fn put_event(&self, account: &str, e: &TrailEvent) -> StoreResult<()> {
        self.state(1)
            .trail
            .insert((account.to_string(), trail_key(e)), e.clone());
        self.done(Ok(())).await
    }

    async fn events(
        &self,
        account: &str,
        start_ms: i64,
        end_ms: i64,
        cursor: Option<&str>,
        want: usize,
        keep: TrailFilter<'_>,
    ) -> StoreResult<(Vec<TrailEvent>, Option<String>)> {
        let out = {
            let st = self.state(1);
            let mut out = Vec::new();
            let mut next = None;
            let newest_first = st.trail.iter().rev().filter(|((a, k), e)| {
                a == account
                    && (start_ms..=end_ms).contains(&e.at_ms)
                    && cursor.is_none_or(|c| k.as_str() < c)
            });
            for ((_, k), e) in newest_first {
                if keep(e) {
                    out.push(e.clone());
                    if out.len() >= want {
                        next = Some(k.clone());
                        break;
                    }
                }
            }
            (out, next)
        };
        self.done(Ok(out)).await
    }
}
