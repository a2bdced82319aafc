//! The errors a client sees: AWS's codes, HTTP statuses and messages.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub code: &'static str,
    pub status: u16,
    pub message: String,
}

impl ApiError {
    fn new(code: &'static str, status: u16, message: impl Into<String>) -> Self {
        Self {
            code,
            status,
            message: message.into(),
        }
    }

    pub fn validation(message: impl Into<String>) -> Self {
        Self::new("ValidationError", 400, message)
    }
    pub fn already_exists(message: impl Into<String>) -> Self {
        Self::new("AlreadyExists", 400, message)
    }
    pub fn resource_in_use(message: impl Into<String>) -> Self {
        Self::new("ResourceInUse", 400, message)
    }
    pub fn scaling_activity_in_progress(message: impl Into<String>) -> Self {
        Self::new("ScalingActivityInProgress", 400, message)
    }
    /// A user over their request rate (`phantom_rules::throttle`): what AWS answers, which every SDK
    /// and the AWS CLI retry with backoff.
    pub fn throttling() -> Self {
        Self::new("Throttling", 400, "Rate exceeded")
    }
    pub fn limit_exceeded(message: impl Into<String>) -> Self {
        Self::new("LimitExceeded", 400, message)
    }
    pub fn instance_refresh_in_progress(message: impl Into<String>) -> Self {
        Self::new("InstanceRefreshInProgress", 400, message)
    }
    pub fn active_instance_refresh_not_found(message: impl Into<String>) -> Self {
        Self::new("ActiveInstanceRefreshNotFound", 400, message)
    }
    pub fn irreversible_instance_refresh(message: impl Into<String>) -> Self {
        Self::new("IrreversibleInstanceRefresh", 400, message)
    }
    pub fn idempotent_parameter_mismatch(message: impl Into<String>) -> Self {
        Self::new("IdempotentParameterMismatch", 400, message)
    }
    pub fn invalid_next_token(message: impl Into<String>) -> Self {
        Self::new("InvalidNextToken", 400, message)
    }
    /// A conditional write lost a race it could not settle by retrying; the client retries.
    pub fn resource_contention(message: impl Into<String>) -> Self {
        Self::new("ResourceContention", 500, message)
    }
    pub fn invalid_action(action: &str, version: &str) -> Self {
        Self::new(
            "InvalidAction",
            400,
            format!("Could not find operation {action} for version {version}"),
        )
    }
    /// A JSON or CBOR body that cannot be read as its operation's input.
    pub fn serialization(message: impl Into<String>) -> Self {
        Self::new("SerializationException", 400, message)
    }
    /// A JSON or CBOR request naming no operation of the service.
    pub fn unknown_operation(operation: &str) -> Self {
        Self::new(
            "UnknownOperationException",
            400,
            format!("Unknown operation {operation}"),
        )
    }
    // CloudWatch's own.
    pub fn invalid_parameter_value(message: impl Into<String>) -> Self {
        Self::new("InvalidParameterValue", 400, message)
    }
    pub fn invalid_parameter_combination(message: impl Into<String>) -> Self {
        Self::new("InvalidParameterCombination", 400, message)
    }
    pub fn missing_parameter(message: impl Into<String>) -> Self {
        Self::new("MissingParameter", 400, message)
    }
    pub fn resource_not_found(message: impl Into<String>) -> Self {
        Self::new("ResourceNotFound", 404, message)
    }
    /// The tag actions' own name for it.
    pub fn resource_not_found_exception(message: impl Into<String>) -> Self {
        Self::new("ResourceNotFoundException", 404, message)
    }
    pub fn invalid_format(message: impl Into<String>) -> Self {
        Self::new("InvalidFormat", 400, message)
    }
    /// An operation of the service's model that Phantom does not answer, and why.
    pub fn invalid_action_because(action: &str, why: &str) -> Self {
        Self::new(
            "InvalidAction",
            400,
            format!("Phantom does not answer {action}: {why}."),
        )
    }
    pub fn malformed_query(message: impl Into<String>) -> Self {
        Self::new("MalformedQueryString", 400, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new("InternalFailure", 500, message)
    }
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new("ServiceUnavailable", 503, message)
    }

    // IAM's, in its model's codes and statuses.
    pub fn no_such_entity(message: impl Into<String>) -> Self {
        Self::new("NoSuchEntity", 404, message)
    }
    pub fn entity_already_exists(message: impl Into<String>) -> Self {
        Self::new("EntityAlreadyExists", 409, message)
    }
    /// IAM's quota refusal (Auto Scaling's `LimitExceeded` is a 400).
    pub fn iam_limit_exceeded(message: impl Into<String>) -> Self {
        Self::new("LimitExceeded", 409, message)
    }
    pub fn delete_conflict(message: impl Into<String>) -> Self {
        Self::new("DeleteConflict", 409, message)
    }
    pub fn malformed_policy_document(message: impl Into<String>) -> Self {
        Self::new("MalformedPolicyDocument", 400, message)
    }
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new("InvalidInput", 400, message)
    }
    /// A request an identity's policies do not allow, in AWS's words (`phantom_rules::iam`).
    pub fn access_denied(message: impl Into<String>) -> Self {
        Self::new("AccessDenied", 403, message)
    }
    pub fn packed_policy_too_large(message: impl Into<String>) -> Self {
        Self::new("PackedPolicyTooLarge", 400, message)
    }
    /// A session token that is past its expiry (STS's words).
    pub fn expired_token() -> Self {
        Self::new(
            "ExpiredToken",
            403,
            "The security token included in the request is expired",
        )
    }

    // CloudTrail's (a JSON service: the code is the shape's name).
    pub fn invalid_lookup_attributes(message: impl Into<String>) -> Self {
        Self::new("InvalidLookupAttributesException", 400, message)
    }
    pub fn invalid_time_range(message: impl Into<String>) -> Self {
        Self::new("InvalidTimeRangeException", 400, message)
    }
    pub fn invalid_next_token_exception(message: impl Into<String>) -> Self {
        Self::new("InvalidNextTokenException", 400, message)
    }

    // Authentication: 403, as AWS answers them.
    pub fn missing_authentication_token() -> Self {
        Self::new(
            "MissingAuthenticationToken",
            403,
            "Request is missing Authentication Token",
        )
    }
    pub fn incomplete_signature(message: impl Into<String>) -> Self {
        Self::new("IncompleteSignature", 403, message)
    }
    pub fn invalid_client_token_id() -> Self {
        Self::new(
            "InvalidClientTokenId",
            403,
            "The security token included in the request is invalid.",
        )
    }
    pub fn signature_does_not_match(message: impl Into<String>) -> Self {
        Self::new("SignatureDoesNotMatch", 403, message)
    }
    pub fn request_expired(message: impl Into<String>) -> Self {
        Self::new("RequestExpired", 403, message)
    }

    /// `Sender` for the client's mistakes, `Receiver` for ours.
    pub fn fault_type(&self) -> &'static str {
        if self.status >= 500 {
            "Receiver"
        } else {
            "Sender"
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

pub type ApiResult<T> = Result<T, ApiError>;

/// The domain's refusals: ValidationError, or LimitExceeded for a quota.
impl From<phantom_model::Refusal> for ApiError {
    fn from(e: phantom_model::Refusal) -> Self {
        match e {
            phantom_model::Refusal::Invalid(m) => Self::validation(m),
            phantom_model::Refusal::OverLimit(m) => Self::limit_exceeded(m),
        }
    }
}
