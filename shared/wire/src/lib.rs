//! The Auto Scaling Query protocol, API version 2011-01-01: `shapes` (botocore's service model),
//! `query` (decoding a request, checked against the model), `xml` (rendering an answer or an error),
//! `sigv4` (verifying a signature), `paging` (MaxRecords and NextToken) and `error` (the errors a
//! client sees, and the one place a rule's `Refusal` becomes one); and `gateway`, API Gateway's
//! proxy event and answer, as the deployed api meets requests.

pub mod error;
pub mod gateway;
pub mod limits;
pub mod paging;
pub mod patterns;
pub mod query;
pub mod rpc;
pub mod shapes;
pub mod sigv4;
pub mod xml;

pub use error::{ApiError, ApiResult};
