//! An IAM policy document as IAM reads it: `Version`, and `Statement` (one or a list), each with
//! `Effect`, `Action` or `NotAction`, `Resource` or `NotResource`, and `Condition` (operator, then
//! key, then one value or a list). A document IAM would refuse is refused with IAM's
//! `MalformedPolicyDocument` words.

use serde_json::Value;

/// A policy, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub statements: Vec<Statement>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub sid: Option<String>,
    pub allow: bool,
    /// `Action`'s patterns, or `NotAction`'s (then `not_action`).
    pub actions: Vec<String>,
    pub not_action: bool,
    /// `Resource`'s patterns, or `NotResource`'s (then `not_resource`).
    pub resources: Vec<String>,
    pub not_resource: bool,
    pub conditions: Vec<Condition>,
    /// A trust policy's principals (`AWS:<arn or account>`, `Service:<name>`, or `*`), or
    /// `NotPrincipal`'s (then `not_principal`); empty in an identity-based policy.
    pub principals: Vec<String>,
    pub not_principal: bool,
    /// Policy variables (`${aws:username}`) in its resources and condition values are replaced
    /// by the request's keys: only in a `2012-10-17` policy, as IAM's.
    pub variables: bool,
}

/// One operator on one key: `"StringEquals": {"aws:username": ["a", "b"]}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// As written, with its `ForAllValues:` / `ForAnyValue:` prefix and `IfExists` suffix.
    pub operator: String,
    pub key: String,
    pub values: Vec<String>,
}

/// Why a document is refused (IAM's `MalformedPolicyDocument`).
pub type Malformed = String;

/// The versions IAM takes.
const VERSIONS: [&str; 2] = ["2012-10-17", "2008-10-17"];

/// `text` read as an identity-based policy document.
pub fn parse(text: &str) -> Result<Policy, Malformed> {
    parse_as(text, false)
}

/// `text` read as a role's trust policy: each statement names its `Principal` and no
/// `Resource`.
pub fn parse_trust(text: &str) -> Result<Policy, Malformed> {
    parse_as(text, true)
}

fn parse_as(text: &str, trust: bool) -> Result<Policy, Malformed> {
    let doc: Value =
        serde_json::from_str(text).map_err(|e| format!("Syntax errors in policy: {e}."))?;
    let Value::Object(doc) = doc else {
        return Err("Syntax errors in policy: a policy is a JSON object.".into());
    };
    for key in doc.keys() {
        if !["Version", "Statement", "Id"].contains(&key.as_str()) {
            return Err(format!("Policy document should not specify {key}."));
        }
    }
    if let Some(v) = doc.get("Version") {
        if !v.as_str().is_some_and(|v| VERSIONS.contains(&v)) {
            return Err(format!(
                "The policy's Version must be one of {}.",
                VERSIONS.join(", ")
            ));
        }
    }
    let statements = match doc.get("Statement") {
        Some(Value::Array(list)) => list
            .iter()
            .map(|s| statement(s, trust))
            .collect::<Result<Vec<_>, _>>()?,
        Some(one @ Value::Object(_)) => vec![statement(one, trust)?],
        _ => return Err("Missing required field Statement.".into()),
    };
    let variables = doc.get("Version").and_then(Value::as_str) == Some("2012-10-17");
    let statements = statements
        .into_iter()
        .map(|s| Statement { variables, ..s })
        .collect();
    Ok(Policy { statements })
}

fn statement(v: &Value, trust: bool) -> Result<Statement, Malformed> {
    let Value::Object(s) = v else {
        return Err("Syntax errors in policy: a Statement is a JSON object.".into());
    };
    const KNOWN: [&str; 9] = [
        "Sid",
        "Effect",
        "Action",
        "NotAction",
        "Resource",
        "NotResource",
        "Condition",
        "Principal",
        "NotPrincipal",
    ];
    if let Some(k) = s.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(format!("Statement has an unknown field {k}."));
    }
    let named = s.contains_key("Principal") || s.contains_key("NotPrincipal");
    if named && !trust {
        return Err(
            "Has prohibited field Principal: an identity-based policy names no principal.".into(),
        );
    }
    let (principals, not_principal) = match trust {
        true => principals(s)?,
        false => (Vec::new(), false),
    };
    if trust && (s.contains_key("Resource") || s.contains_key("NotResource")) {
        return Err("Has prohibited field Resource: a trust policy names no resource.".into());
    }
    let allow = match s.get("Effect").and_then(Value::as_str) {
        Some("Allow") => true,
        Some("Deny") => false,
        Some(other) => return Err(format!("Invalid effect: {other}.")),
        None => return Err("Missing required field Effect.".into()),
    };
    let (actions, not_action) = either(s, "Action", "NotAction")?;
    let (resources, not_resource) = match trust {
        // A trust policy is about its role alone.
        true => (vec!["*".to_string()], false),
        false => either(s, "Resource", "NotResource")?,
    };
    for a in &actions {
        if a != "*" && !a.contains(':') {
            return Err(format!(
                "Actions/Conditions must be prefaced by a vendor, e.g., iam, sdb, ec2, etc.: {a}"
            ));
        }
    }
    let conditions = match s.get("Condition") {
        None => Vec::new(),
        Some(Value::Object(ops)) => {
            let mut out = Vec::new();
            for (operator, keys) in ops {
                let Value::Object(keys) = keys else {
                    return Err(format!(
                        "Syntax errors in policy: Condition {operator} maps keys to values."
                    ));
                };
                for (key, values) in keys {
                    out.push(Condition {
                        operator: operator.clone(),
                        key: key.clone(),
                        values: strings(values, "Condition")?,
                    });
                }
            }
            out
        }
        Some(_) => return Err("Syntax errors in policy: Condition is a JSON object.".into()),
    };
    for c in &conditions {
        super::condition::check(&c.operator)?;
    }
    Ok(Statement {
        sid: s.get("Sid").and_then(Value::as_str).map(str::to_string),
        allow,
        actions,
        not_action,
        resources,
        not_resource,
        conditions,
        principals,
        not_principal,
        // Set by `parse`, which knows the policy's version.
        variables: false,
    })
}

/// A trust statement's `Principal` or `NotPrincipal`: `*`, or `{"AWS": ..., "Service": ...}`
/// flattened to `AWS:<value>`, `Service:<value>`.
fn principals(s: &serde_json::Map<String, Value>) -> Result<(Vec<String>, bool), Malformed> {
    let (v, not) = match (s.get("Principal"), s.get("NotPrincipal")) {
        (Some(v), None) => (v, false),
        (None, Some(v)) => (v, true),
        (Some(_), Some(_)) => {
            return Err("Statement may not have both Principal and NotPrincipal.".into())
        }
        (None, None) => return Err("Missing required field Principal.".into()),
    };
    let out = match v {
        Value::String(star) if star == "*" => vec!["*".to_string()],
        Value::Object(kinds) => {
            let mut out = Vec::new();
            for (kind, values) in kinds {
                if !["AWS", "Service", "Federated", "CanonicalUser"].contains(&kind.as_str()) {
                    return Err(format!("Invalid principal in policy: {kind}."));
                }
                for value in strings(values, "Principal")? {
                    out.push(format!("{kind}:{value}"));
                }
            }
            out
        }
        _ => return Err("Invalid principal in policy: a Principal is * or an object.".into()),
    };
    Ok((out, not))
}

/// `name`'s values, or `not`'s (true), exactly one of the two.
fn either(
    s: &serde_json::Map<String, Value>,
    name: &str,
    not: &str,
) -> Result<(Vec<String>, bool), Malformed> {
    match (s.get(name), s.get(not)) {
        (Some(v), None) => Ok((strings(v, name)?, false)),
        (None, Some(v)) => Ok((strings(v, not)?, true)),
        (Some(_), Some(_)) => Err(format!("Statement may not have both {name} and {not}.")),
        (None, None) => Err(format!("Missing required field {name}.")),
    }
}

/// One string or a list of them (numbers and booleans as IAM reads them: their text).
fn strings(v: &Value, field: &str) -> Result<Vec<String>, Malformed> {
    let one = |v: &Value| match v {
        Value::String(s) => Ok(s.clone()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Number(n) => Ok(n.to_string()),
        _ => Err(format!("Syntax errors in policy: {field} holds strings.")),
    };
    let out: Vec<String> = match v {
        Value::Array(list) => list.iter().map(one).collect::<Result<_, _>>()?,
        other => vec![one(other)?],
    };
    if out.is_empty() {
        return Err(format!("Syntax errors in policy: {field} is empty."));
    }
    Ok(out)
}
