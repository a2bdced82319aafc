//! CloudWatch at Phantom's endpoint: the metric actions an account's VMs, agents and tools call,
//! for clouds that have no CloudWatch of their own. Signed with SigV4 for `monitoring`, per user
//! as Auto Scaling's actions are, in the three protocols CloudWatch's clients speak (JSON 1.0
//! from the AWS CLI and boto3, RPC v2 CBOR from the Go SDK and Terraform, Query from older SDKs):
//! `phantom_wire::rpc` reads each into the same decoded input.

mod alarms;
mod metrics;
mod policy_alarms;

use crate::{auth, App, HttpRequest, HttpResponse};
use phantom_rules::identity::Caller;
use phantom_rules::metric_data::Bad;
use phantom_wire::query::{self, Document};
use phantom_wire::rpc::{self, Protocol};
use phantom_wire::shapes::Service;
use phantom_wire::{xml, ApiError};
use std::time::Instant;

const SERVICE: Service = Service::CloudWatch;

/// How a request for CloudWatch reached the endpoint, if it is one.
pub fn protocol_of(req: &HttpRequest<'_>, path: &str) -> Option<Protocol> {
    let target = req
        .headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok());
    if target.is_some_and(|t| rpc::json_operation(SERVICE, t).is_some()) {
        return Some(Protocol::Json);
    }
    if rpc::cbor_operation(SERVICE, path).is_some() {
        return Some(Protocol::Cbor);
    }
    let params = crate::parameters(req).ok()?;
    (params.get("Version") == Some(SERVICE.version())).then_some(Protocol::Query)
}

pub async fn handle(app: &App, req: HttpRequest<'_>, protocol: Protocol) -> HttpResponse {
    let started = Instant::now();
    let request_id = phantom_rules::ids::uuid();
    let mut operation = String::new();
    let mut user = String::new();
    let outcome = run(app, &req, protocol, &request_id, &mut operation, &mut user).await;
    let mut headers = Vec::new();
    let (status, body, code) = match outcome {
        Ok(result) => {
            let body = match protocol {
                Protocol::Query => {
                    xml::response_of(SERVICE, &operation, result.as_ref(), &request_id).into_bytes()
                }
                Protocol::Json => rpc::json_response(SERVICE, &operation, result.as_ref()),
                Protocol::Cbor => rpc::cbor_response(SERVICE, &operation, result.as_ref()),
            };
            (200, body, "")
        }
        Err(e) => {
            if e.status >= 500 {
                tracing::error!(request_id, code = e.code, message = %e.message, "request failed");
            }
            let body = match protocol {
                Protocol::Query => xml::error_response_of(SERVICE, &e, &request_id).into_bytes(),
                _ => {
                    headers.push((rpc::QUERY_ERROR_HEADER, rpc::query_error_header(&e).into()));
                    rpc::error_body(SERVICE, protocol, &e)
                }
            };
            (e.status, body, e.code)
        }
    };
    if protocol == Protocol::Cbor {
        headers.push((rpc::SMITHY_PROTOCOL_HEADER, rpc::SMITHY_PROTOCOL.into()));
    }
    headers.push(("x-amzn-requestid", request_id.clone().into()));
    crate::log_request(&request_id, &operation, &user, status, code, started);
    HttpResponse {
        status,
        content_type: protocol.content_type(),
        headers,
        body: body.into(),
    }
}

async fn run(
    app: &App,
    req: &HttpRequest<'_>,
    protocol: Protocol,
    request_id: &str,
    operation: &mut String,
    user: &mut String,
) -> Result<Option<Document>, ApiError> {
    let caller =
        auth::authenticate(SERVICE, app.store.as_ref(), &app.keys, app.clock.now(), req).await?;
    user.clone_from(&caller.user);
    let params = match protocol {
        Protocol::Query => {
            let params = crate::parameters(req)?;
            match params.get("Action").filter(|a| !a.is_empty()) {
                Some(a) => *operation = a.to_string(),
                None => return Err(ApiError::invalid_action("(none)", SERVICE.version())),
            }
            params
        }
        Protocol::Json => {
            let target = req
                .headers
                .get("x-amz-target")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            *operation = rpc::json_operation(SERVICE, target)
                .unwrap_or_default()
                .to_string();
            rpc::params_of_json(SERVICE, operation, req.body)?
        }
        Protocol::Cbor => {
            let path = crate::path_of(req.path_and_query);
            *operation = rpc::cbor_operation(SERVICE, path)
                .unwrap_or_default()
                .to_string();
            rpc::params_of_cbor(SERVICE, operation, req.body)?
        }
    };
    app.admit(&caller.user, caller.limits.as_ref(), operation)
        .await?;
    let input = query::decode_input_of(SERVICE, operation, &params);
    let decoded = input.as_ref().ok().map(|i| i.as_value().clone());
    let outcome = match input {
        Ok(input) => {
            match crate::authorize::check(
                app,
                &caller,
                req,
                &format!("cloudwatch:{operation}"),
                "*",
            ) {
                Ok(()) => dispatch(app, &caller, operation, input).await,
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    };
    let asked = crate::trail::Asked {
        service: SERVICE.signing_name(),
        action: operation,
        params: decoded.as_ref(),
        request_id,
    };
    crate::trail::record(app, req, &caller, &asked, crate::trail::refused(&outcome)).await;
    outcome
}

async fn dispatch(
    app: &App,
    caller: &Caller,
    operation: &str,
    input: Document,
) -> Result<Option<Document>, ApiError> {
    let user = caller.user.as_str();
    match operation {
        "PutMetricData" => {
            query::output(metrics::put_metric_data(app, user, query::input(input)?).await?)
        }
        "ListMetrics" => {
            query::output(metrics::list_metrics(app, user, query::input(input)?).await?)
        }
        "GetMetricStatistics" => {
            query::output(metrics::get_metric_statistics(app, user, query::input(input)?).await?)
        }
        "GetMetricData" => {
            query::output(metrics::get_metric_data(app, user, query::input(input)?).await?)
        }
        "PutMetricAlarm" => {
            query::output(alarms::put_metric_alarm(app, caller, query::input(input)?).await?)
        }
        "DescribeAlarms" => {
            query::output(alarms::describe_alarms(app, user, query::input(input)?).await?)
        }
        "DescribeAlarmsForMetric" => query::output(
            alarms::describe_alarms_for_metric(app, user, query::input(input)?).await?,
        ),
        "DeleteAlarms" => {
            query::output(alarms::delete_alarms(app, user, query::input(input)?).await?)
        }
        "EnableAlarmActions" => {
            query::output(alarms::set_actions_enabled(app, user, query::input(input)?, true).await?)
        }
        "DisableAlarmActions" => query::output(
            alarms::set_actions_enabled(app, user, query::input(input)?, false).await?,
        ),
        "SetAlarmState" => {
            query::output(alarms::set_alarm_state(app, user, query::input(input)?).await?)
        }
        "DescribeAlarmHistory" => {
            query::output(alarms::describe_alarm_history(app, user, query::input(input)?).await?)
        }
        "TagResource" => {
            query::output(alarms::tag_resource(app, caller, query::input(input)?).await?)
        }
        "UntagResource" => {
            query::output(alarms::untag_resource(app, caller, query::input(input)?).await?)
        }
        "ListTagsForResource" => {
            query::output(alarms::list_tags_for_resource(app, caller, query::input(input)?).await?)
        }
        other => Err(not_offered(other)),
    }
}

/// The operations of CloudWatch's model Phantom does not answer (dashboards, insight rules,
/// metric streams, ...): refused, saying what it keeps.
fn not_offered(operation: &str) -> ApiError {
    ApiError::invalid_action_because(
        operation,
        "Phantom's CloudWatch keeps metrics and metric alarms for scaling (docs/cloudwatch.md)",
    )
}

/// CloudWatch's own refusals as the client's error.
fn refused(bad: Bad) -> ApiError {
    match bad {
        Bad::Value(m) => ApiError::invalid_parameter_value(m),
        Bad::Combination(m) => ApiError::invalid_parameter_combination(m),
        Bad::Missing(m) => ApiError::missing_parameter(m),
    }
}
