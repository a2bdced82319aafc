//! The Auto Scaling service model (botocore's, trimmed by `model/update.py`), loaded once.
//!
//! Requests are decoded and responses rendered by walking these shapes, so Phantom's wire format is
//! the one boto3, the AWS CLI and the SDKs were generated from.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub const API_VERSION: &str = "2011-01-01";
pub const XML_NAMESPACE: &str = "http://autoscaling.amazonaws.com/doc/2011-01-01/";

#[derive(Debug, Deserialize)]
pub struct Model {
    pub operations: BTreeMap<String, Operation>,
    pub shapes: BTreeMap<String, Shape>,
}

#[derive(Debug, Deserialize)]
pub struct Operation {
    pub input: Option<ShapeRef>,
    pub output: Option<OutputRef>,
}

#[derive(Debug, Deserialize)]
pub struct OutputRef {
    pub shape: String,
    #[serde(rename = "resultWrapper")]
    pub result_wrapper: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ShapeRef {
    pub shape: String,
    #[serde(rename = "locationName")]
    pub location_name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Shape {
    Structure {
        /// Member order is the model's; responses keep it.
        #[serde(default)]
        members: serde_json::Map<String, serde_json::Value>,
        #[serde(default)]
        required: Vec<String>,
    },
    List {
        member: ShapeRef,
        min: Option<i64>,
        max: Option<i64>,
    },
    String {
        min: Option<i64>,
        max: Option<i64>,
        pattern: Option<String>,
        #[serde(rename = "enum")]
        allowed: Option<Vec<String>>,
    },
    Integer {
        min: Option<i64>,
        max: Option<i64>,
    },
    Double {
        min: Option<f64>,
        max: Option<f64>,
    },
    Boolean {},
    Timestamp {},
}

pub fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        serde_json::from_str(include_str!("../model/autoscaling-2011-01-01.json"))
            .expect("the embedded service model is valid")
    })
}

pub fn shape(name: &str) -> &'static Shape {
    model()
        .shapes
        .get(name)
        .unwrap_or_else(|| panic!("shape {name} is in the service model"))
}

/// The members of a structure shape, in model order: (wire name, member shape name).
pub fn members(shape_name: &str) -> Vec<(&'static str, &'static str)> {
    match shape(shape_name) {
        Shape::Structure { members, .. } => members
            .iter()
            .map(|(name, r)| {
                let target = r["shape"].as_str().expect("member has a shape");
                let wire = r.get("locationName").and_then(|v| v.as_str());
                (wire.unwrap_or(name.as_str()), target)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The element name of a list's members on the wire (`member` unless the model says otherwise).
pub fn list_member_name(r: &ShapeRef) -> &str {
    r.location_name.as_deref().unwrap_or("member")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_loads_and_has_the_actions() {
        for op in [
            "CreateLaunchConfiguration",
            "DescribeAutoScalingGroups",
            "SetDesiredCapacity",
        ] {
            assert!(model().operations.contains_key(op), "{op}");
        }
        let m = members("Tag");
        assert!(m.contains(&("Key", "TagKey")));
        assert!(members("CpuPerformanceFactorRequest")
            .contains(&("Reference", "PerformanceFactorReferenceSetRequest")));
    }
}
