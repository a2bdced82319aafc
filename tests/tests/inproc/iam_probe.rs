//! A probe of IAM, STS and CloudTrail at Phantom's endpoint (issue 63): every operation Phantom
//! answers, sent random inputs that botocore's models allow (drawn from the models themselves),
//! is answered with an answer or an error its model documents, never a 5xx.

use super::cloudwatch_probe::value_of;
use phantom_e2e::chaos::rng::Rng;
use phantom_e2e::world::World;
use phantom_wire::shapes::{Service, Shape};
use serde_json::json;

const IAM: [&str; 39] = [
    "CreateUser",
    "GetUser",
    "ListUsers",
    "DeleteUser",
    "CreateAccessKey",
    "UpdateAccessKey",
    "DeleteAccessKey",
    "ListAccessKeys",
    "GetAccessKeyLastUsed",
    "PutUserPolicy",
    "GetUserPolicy",
    "ListUserPolicies",
    "DeleteUserPolicy",
    "CreatePolicy",
    "GetPolicy",
    "ListPolicies",
    "DeletePolicy",
    "CreatePolicyVersion",
    "GetPolicyVersion",
    "ListPolicyVersions",
    "DeletePolicyVersion",
    "SetDefaultPolicyVersion",
    "AttachUserPolicy",
    "DetachUserPolicy",
    "ListAttachedUserPolicies",
    "CreateRole",
    "GetRole",
    "ListRoles",
    "DeleteRole",
    "UpdateAssumeRolePolicy",
    "PutRolePolicy",
    "GetRolePolicy",
    "ListRolePolicies",
    "DeleteRolePolicy",
    "AttachRolePolicy",
    "DetachRolePolicy",
    "ListAttachedRolePolicies",
    "SimulatePrincipalPolicy",
    "SimulateCustomPolicy",
];

/// The errors any request may get beside its operation's own: the Query protocol's and
/// authorization's, and InvalidInput for what Phantom refuses to keep (a permissions boundary,
/// the root's own key).
const ANY: [&str; 5] = [
    "ValidationError",
    "AccessDenied",
    "Throttling",
    "InvalidInput",
    "ResourceContention",
];

/// The codes `op`'s model documents.
fn documented(service: Service, op: &str) -> Vec<String> {
    let model = service.model();
    let mut codes: Vec<String> = model.operations[op]
        .errors
        .iter()
        .map(|e| match &model.shapes[&e.shape] {
            Shape::Structure {
                error: Some(err), ..
            } => err.code.clone().unwrap_or_else(|| e.shape.clone()),
            _ => e.shape.clone(),
        })
        .collect();
    codes.extend(ANY.iter().map(|c| c.to_string()));
    codes
}

/// The text of the first `<tag>` element.
fn element<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(&xml[start..end])
}

#[tokio::test]
async fn every_operation_answers_random_valid_inputs_without_a_5xx() {
    let w = World::new().await;
    let u = w.user("iam-probe").await;
    let keys = (u.access_key_id.as_str(), u.secret.as_str());
    let mut rng = Rng::new(63);
    let mut codes = std::collections::BTreeMap::<String, usize>::new();
    let ops = IAM.iter().map(|op| (Service::Iam, *op)).chain([
        (Service::Sts, "GetSessionToken"),
        (Service::Sts, "GetCallerIdentity"),
        (Service::CloudTrail, "LookupEvents"),
    ]);
    for (service, op) in ops {
        let input = service.model().operations[op]
            .input
            .as_ref()
            .map(|i| i.shape.clone());
        for _ in 0..40 {
            // Within the user's request rates.
            w.clock.advance_ms(500);
            let now_s = phantom_model::time::Clock::now_ms(w.clock.as_ref()) / 1000;
            let body = input.as_deref().map_or(json!({}), |shape| {
                value_of(service, &mut rng, shape, now_s, 0)
            });
            let (status, code, answer) = match service {
                Service::CloudTrail => {
                    let (status, answer) = w.lookup_events(keys, body.clone()).await;
                    let code = answer["__type"].as_str().unwrap_or("OK").to_string();
                    (status, code, answer.to_string())
                }
                _ => {
                    let bytes = serde_json::to_vec(&body).expect("JSON");
                    let params = phantom_wire::rpc::params_of_json(service, op, &bytes)
                        .unwrap_or_else(|e| panic!("{op} {body}: {e:?}"));
                    let pairs: Vec<(&str, &str)> = params.pairs().collect();
                    let (status, xml) = match service {
                        Service::Sts => w.sts(keys, op, &pairs).await,
                        _ => w.iam(keys, op, &pairs).await,
                    };
                    let code = element(&xml, "Code").unwrap_or("OK").to_string();
                    (status, code, xml)
                }
            };
            assert!(status < 500, "{op} {body}: HTTP {status} {answer}");
            if status != 200 {
                assert!(
                    documented(service, op).contains(&code),
                    "{op} {body}: HTTP {status} {answer}"
                );
            }
            *codes.entry(format!("{op} {code}")).or_default() += 1;
        }
    }
    // The probe reaches past the decoder: some inputs are taken.
    for op in ["CreateUser", "ListUsers", "GetSessionToken", "LookupEvents"] {
        assert!(codes.contains_key(&format!("{op} OK")), "{codes:?}");
    }
}
