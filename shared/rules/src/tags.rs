//! A group's tags: CreateOrUpdateTags, DeleteTags and DescribeTags, pure. Tags live in the group's
//! settings as AWS's `TagDescription`s, so DescribeAutoScalingGroups shows them as they are.

pub use phantom_model::group::TagDescription;
use phantom_model::request::{Filter, Tag};
use phantom_model::{Checked, Refusal};

/// AWS's quota of tags per group.
pub const MAX_TAGS: usize = 50;

pub const RESOURCE_TYPE: &str = "auto-scaling-group";

/// One tag of a request, checked: the group it is for, its key, value and propagation.
#[derive(Debug, Clone, PartialEq)]
pub struct TagChange {
    pub group: String,
    pub key: String,
    pub value: Option<String>,
    pub propagate: Option<bool>,
}

/// The request's `Tags`, checked as AWS checks them: a group's tag, a key not starting `aws:`.
pub fn parse(tags: &[Tag]) -> Checked<Vec<TagChange>> {
    let mut out = Vec::new();
    for t in tags {
        let kind = t.resource_type.as_deref().unwrap_or(RESOURCE_TYPE);
        if kind != RESOURCE_TYPE {
            return Err(Refusal::invalid(format!(
                "Invalid resource type '{kind}': only '{RESOURCE_TYPE}' has tags."
            )));
        }
        let Some(group) = t.resource_id.as_deref().filter(|g| !g.is_empty()) else {
            return Err(Refusal::invalid(
                "1 validation error detected: Value null at 'tags.member.resourceId' failed to satisfy constraint: Member must not be null",
            ));
        };
        let key = t.key.clone();
        if key.to_ascii_lowercase().starts_with("aws:") {
            return Err(Refusal::invalid(format!(
                "Tag keys starting with 'aws:' are reserved: '{key}'."
            )));
        }
        out.push(TagChange {
            group: group.to_string(),
            key,
            value: t.value.clone(),
            propagate: t.propagate_at_launch,
        });
    }
    Ok(out)
}

/// A group's tags as AWS keeps and shows them: ordered by key (tools such as Ansible compare
/// the tags they read with the ones they sorted, and would see a change that is not there).
pub fn order(tags: &mut [TagDescription]) {
    tags.sort_by(|a, b| a.key.cmp(&b.key));
}

/// The group's tags with `changes` (all for `group`) added or replaced, ordered by key.
pub fn upsert(
    current: &[TagDescription],
    group: &str,
    changes: &[&TagChange],
) -> Checked<Vec<TagDescription>> {
    let mut tags = current.to_vec();
    for c in changes {
        let new = TagDescription {
            resource_id: group.to_string(),
            resource_type: RESOURCE_TYPE.to_string(),
            key: c.key.clone(),
            // AWS's defaults for a tag given without them.
            value: c.value.clone().unwrap_or_default(),
            propagate_at_launch: c.propagate.unwrap_or(false),
        };
        match tags.iter_mut().find(|t| t.key == c.key) {
            Some(t) => *t = new,
            None => tags.push(new),
        }
    }
    if tags.len() > MAX_TAGS {
        return Err(Refusal::over_limit(format!(
            "The quota of {MAX_TAGS} tags per group would be exceeded for AutoScalingGroup {group}."
        )));
    }
    order(&mut tags);
    Ok(tags)
}

/// The group's tags without the keys of `changes` (a value, if given, must match, as AWS).
pub fn remove(current: &[TagDescription], changes: &[&TagChange]) -> Vec<TagDescription> {
    current
        .iter()
        .filter(|t| {
            !changes
                .iter()
                .any(|c| t.key == c.key && c.value.as_deref().is_none_or(|v| t.value == v))
        })
        .cloned()
        .collect()
}

/// One of DescribeTags' filters.
#[derive(Debug, Clone, PartialEq)]
pub struct TagFilter {
    name: String,
    values: Vec<String>,
}

pub fn parse_filters(filters: &[Filter]) -> Checked<Vec<TagFilter>> {
    let mut out = Vec::new();
    for f in filters {
        let name = f.name.clone().ok_or_else(|| {
            Refusal::invalid(
                "Each filter needs a Name: auto-scaling-group, key, value or propagate-at-launch.",
            )
        })?;
        if !["auto-scaling-group", "key", "value", "propagate-at-launch"].contains(&name.as_str()) {
            return Err(Refusal::invalid(format!(
                "Filter name '{name}' is not valid: use auto-scaling-group, key, value or propagate-at-launch."
            )));
        }
        out.push(TagFilter {
            name,
            values: f.values.clone(),
        });
    }
    Ok(out)
}

/// Whether a tag passes every filter (each: any of its values).
pub fn matches(tag: &TagDescription, filters: &[TagFilter]) -> bool {
    filters.iter().all(|f| {
        let have = match f.name.as_str() {
            "auto-scaling-group" => &tag.resource_id,
            "key" => &tag.key,
            "value" => &tag.value,
            // `true` or `True` (what Python's str() of a boolean gives), as AWS takes either.
            _ => {
                let have = tag.propagate_at_launch.to_string();
                return f.values.is_empty()
                    || f.values.iter().any(|v| v.eq_ignore_ascii_case(&have));
            }
        };
        f.values.is_empty() || f.values.contains(have)
    })
}

/// The paging position of a tag: its group, then its key.
pub fn position(tag: &TagDescription) -> String {
    format!("{}\u{0}{}", tag.resource_id, tag.key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A list of a request, as the decoder gives it.
    fn list<T: serde::de::DeserializeOwned>(v: Value) -> Vec<T> {
        serde_json::from_value(v).unwrap()
    }

    fn tag(key: &str, value: &str) -> TagDescription {
        TagDescription {
            resource_id: "web".into(),
            resource_type: RESOURCE_TYPE.into(),
            key: key.into(),
            value: value.into(),
            propagate_at_launch: false,
        }
    }

    fn change(key: &str, value: Option<&str>) -> TagChange {
        TagChange {
            group: "web".into(),
            key: key.into(),
            value: value.map(str::to_string),
            propagate: Some(true),
        }
    }

    #[test]
    fn upsert_replaces_by_key_and_orders_by_key() {
        let cur = [tag("a", "1"), tag("c", "2")];
        let (c, b) = (change("c", Some("x")), change("b", None));
        let out = upsert(&cur, "web", &[&c, &b]).unwrap();
        let kv: Vec<(String, String)> = out
            .iter()
            .map(|t| (t.key.clone(), t.value.clone()))
            .collect();
        assert_eq!(
            kv,
            [
                ("a".into(), "1".into()),
                ("b".into(), "".into()),
                ("c".into(), "x".into())
            ]
        );
        assert!(out[1].propagate_at_launch);
        assert_eq!(out[1].resource_type, RESOURCE_TYPE);
    }

    #[test]
    fn upsert_stops_at_the_quota() {
        let many: Vec<TagChange> = (0..=MAX_TAGS)
            .map(|i| change(&format!("k{i}"), None))
            .collect();
        let refs: Vec<&TagChange> = many.iter().collect();
        assert!(matches!(
            upsert(&[], "web", &refs).unwrap_err(),
            Refusal::OverLimit(_)
        ));
    }

    #[test]
    fn remove_by_key_and_value_when_given() {
        let cur = [tag("a", "1"), tag("b", "2")];
        let (a_wrong, b) = (change("a", Some("9")), change("b", None));
        let out = remove(&cur, &[&a_wrong, &b]);
        assert_eq!(out, [tag("a", "1")]);
    }

    #[test]
    fn parse_refuses_other_resources_and_reserved_keys() {
        let bad_type = json!([{"ResourceId": "web", "ResourceType": "instance", "Key": "a"}]);
        assert!(matches!(
            parse(&list(bad_type)).unwrap_err(),
            Refusal::Invalid(_)
        ));
        let reserved = json!([{"ResourceId": "web", "Key": "aws:x"}]);
        assert!(matches!(
            parse(&list(reserved)).unwrap_err(),
            Refusal::Invalid(_)
        ));
        let none = json!([{"Key": "a"}]);
        assert!(matches!(
            parse(&list(none)).unwrap_err(),
            Refusal::Invalid(_)
        ));
    }

    #[test]
    fn filters_match_any_value_of_each() {
        let t = TagDescription {
            propagate_at_launch: true,
            ..tag("env", "prod")
        };
        let f = parse_filters(&list(json!([
            {"Name": "key", "Values": ["env", "team"]},
            {"Name": "propagate-at-launch", "Values": ["true"]}
        ])))
        .unwrap();
        assert!(matches(&t, &f));
        for (value, found) in [("True", true), ("false", false), ("False", false)] {
            let f = parse_filters(&list(json!([
                {"Name": "propagate-at-launch", "Values": [value]}
            ])))
            .unwrap();
            assert_eq!(matches(&t, &f), found, "{value}");
        }
        let g = parse_filters(&list(
            json!([{"Name": "auto-scaling-group", "Values": ["db"]}]),
        ))
        .unwrap();
        assert!(!matches(&t, &g));
        assert!(parse_filters(&list(json!([{"Name": "color", "Values": ["x"]}]))).is_err());
    }
}
