//! The launch request built from a launch configuration: placeholder, filled in by the cloud seam work.
use crate::reconcile::Placement;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct LaunchRequest {
    pub count: i32,
    pub client_token: String,
    pub image_id: Option<String>,
    pub instance_type: Option<String>,
    pub placement: Placement,
    pub tags: Vec<(String, String)>,
}

pub fn launch_request(
    lc: &Value,
    count: i32,
    placement: &Placement,
    client_token: String,
    tags: Vec<(String, String)>,
) -> LaunchRequest {
    LaunchRequest {
        count,
        client_token,
        image_id: lc["ImageId"].as_str().map(str::to_string),
        instance_type: lc["InstanceType"].as_str().map(str::to_string),
        placement: placement.clone(),
        tags,
    }
}
