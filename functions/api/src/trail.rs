//! The audit trail, written (issue 63): each change an account's identity asked for, whatever
//! its outcome, and each request a policy refused, as one event in the account's trail with who
//! asked, from where, what (secrets never) and how it ended (`phantom_rules::trail`). A request
//! refused before it is authenticated or throttled is not the account's and is not recorded.

use crate::{App, HttpRequest};
use phantom_model::trail::{TrailEvent, Who};
use phantom_rules::iam::principal;
use phantom_rules::identity::Caller;
use phantom_rules::trail;
use phantom_wire::ApiError;
use serde_json::Value;

/// A request as the trail records it.
pub struct Asked<'a> {
    /// The service's signing name (`autoscaling`, `iam`, ...), or `phantom`.
    pub service: &'a str,
    pub action: &'a str,
    /// Its decoded parameters (None: they could not be read).
    pub params: Option<&'a Value>,
    pub request_id: &'a str,
}

/// A refusal's code and message.
pub type Refused<'a> = Option<(&'a str, &'a str)>;

/// The refusal of an outcome, for `record`.
pub fn refused<T>(outcome: &Result<T, ApiError>) -> Refused<'_> {
    outcome.as_ref().err().map(|e| (e.code, e.message.as_str()))
}

/// Records `asked` with its outcome (`refused`: None when it succeeded) when the trail keeps
/// it; a failed write is logged (the request's answer stands).
pub async fn record(
    app: &App,
    req: &HttpRequest<'_>,
    caller: &Caller,
    asked: &Asked<'_>,
    refused: Refused<'_>,
) {
    if !trail::recorded(asked.action, refused.map(|(code, _)| code)) {
        return;
    }
    let source = trail::source_of(asked.service);
    let params = asked.params.map_or(Value::Null, trail::redact);
    let e = TrailEvent {
        event_id: phantom_rules::ids::uuid(),
        at_ms: app.clock.now_ms(),
        resources: trail::resources(&source, asked.action, &params),
        event_source: source,
        event_name: asked.action.to_string(),
        region: app.config.region.clone(),
        source_ip: req.source_ip.map(|ip| ip.to_string()),
        user_agent: req
            .headers
            .get("user-agent")
            .and_then(|v| v.to_str().ok())
            .map(String::from),
        who: who(caller),
        request_parameters: params,
        error_code: refused.map(|(code, _)| code.to_string()),
        error_message: refused.map(|(_, message)| message.to_string()),
        request_id: asked.request_id.to_string(),
        read_only: trail::read_only(asked.action),
    };
    if let Err(err) = app.store.put_event(&caller.user, &e).await {
        tracing::error!(error = %err, event = e.event_name, "an audit event could not be recorded");
    }
}

fn who(c: &Caller) -> Who {
    let identity = c.identity.as_ref();
    let role_session = identity.and_then(|i| i.role_session.clone());
    Who {
        kind: match (identity, &role_session) {
            (None, _) => "Root",
            (Some(_), Some(_)) => "AssumedRole",
            (Some(_), None) => "IAMUser",
        }
        .into(),
        principal_id: principal::principal_id(&c.account_id, identity),
        arn: principal::arn(&c.account_id, identity),
        account_id: c.account_id.clone(),
        access_key_id: c.access_key_id.clone(),
        // A role's session is known by its session name, as CloudTrail's Username says.
        user_name: role_session.or_else(|| identity.map(|i| i.name.clone())),
        in_session: c.session.is_some(),
    }
}
