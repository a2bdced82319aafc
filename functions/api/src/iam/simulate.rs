//! IAM's policy simulator: which of a list of actions an identity's policies (or given ones)
//! allow on which resources, with the condition keys the caller gives, evaluated as a request
//! is (`phantom_rules::iam`).

use super::Ask;
use phantom_model::iam as m;
use phantom_rules::iam::{self, Context, Decision, Policy};
use phantom_wire::ApiError;

/// The simulator refuses a policy that does not read with InvalidInput (its model has no
/// MalformedPolicyDocument).
fn read(documents: &[String]) -> Result<Vec<Policy>, ApiError> {
    documents
        .iter()
        .map(|d| {
            iam::parse(d)
                .map_err(|e| ApiError::invalid_input(format!("A policy does not read: {e}")))
        })
        .collect()
}

/// The identity policies of the user or role `arn` names.
async fn source(at: &Ask<'_>, arn: &str) -> Result<Vec<String>, ApiError> {
    let prefix = format!("arn:aws:iam::{}:", at.caller.account_id);
    let rest = arn.strip_prefix(&prefix).ok_or_else(|| {
        ApiError::no_such_entity(format!("The entity {arn} is not one of this account's."))
    })?;
    let name = rest.rsplit('/').next().unwrap_or_default();
    let found = if rest.starts_with("user/") {
        let u = at.user("SimulatePrincipalPolicy", Some(name)).await?;
        Some(u.identity().policies)
    } else if rest.starts_with("role/") {
        let r = super::roles::role(at, "SimulatePrincipalPolicy", name).await?;
        Some(r.identity("simulation", Vec::new()).policies)
    } else {
        None
    };
    found.ok_or_else(|| {
        ApiError::invalid_input(format!(
            "Phantom simulates users' and roles' policies; {arn} is neither."
        ))
    })
}

pub async fn simulate(at: &Ask<'_>, r: m::Simulate) -> Result<m::SimulatePolicyResponse, ApiError> {
    if r.resource_policy.is_some() || !r.permissions_boundary_policy_input_list.is_empty() {
        return Err(ApiError::invalid_input(
            "Phantom simulates identity policies; resource policies and permissions boundaries are not kept.",
        ));
    }
    let mut documents = match &r.policy_source_arn {
        Some(arn) => source(at, arn).await?,
        None => {
            at.allow("SimulateCustomPolicy", "*")?;
            Vec::new()
        }
    };
    documents.extend(r.policy_input_list.iter().cloned());
    let policies = read(&documents)?;
    let mut ctx = Context::default();
    for e in &r.context_entries {
        if let Some(k) = &e.context_key_name {
            ctx.set(k, e.context_key_values.clone());
        }
    }
    let resources = match r.resource_arns.is_empty() {
        true => vec!["*".to_string()],
        false => r.resource_arns,
    };
    let mut results = Vec::new();
    for action in &r.action_names {
        for resource in &resources {
            let d = iam::decide(
                &policies,
                &iam::Request {
                    action,
                    resource,
                    context: &ctx,
                },
            );
            results.push(m::EvaluationResult {
                eval_action_name: action.clone(),
                eval_resource_name: resource.clone(),
                eval_decision: match d {
                    Decision::Allow => "allowed",
                    Decision::ExplicitDeny => "explicitDeny",
                    Decision::ImplicitDeny => "implicitDeny",
                }
                .into(),
                missing_context_values: Vec::new(),
            });
        }
    }
    Ok(m::SimulatePolicyResponse {
        evaluation_results: results,
        is_truncated: false,
    })
}
