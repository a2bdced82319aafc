//! The service models Phantom speaks (botocore's, trimmed by `model/update.py`), loaded once:
//! Auto Scaling's, and CloudWatch's for the metrics and alarms behind scaling policies.
//!
//! Requests are decoded and responses rendered by walking these shapes, so Phantom's wire format is
//! the one boto3, the AWS CLI and the SDKs were generated from.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub const API_VERSION: &str = "2011-01-01";
pub const XML_NAMESPACE: &str = "http://autoscaling.amazonaws.com/doc/2011-01-01/";

/// A service at Phantom's endpoint, and the model its requests are read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    AutoScaling,
    CloudWatch,
    /// IAM's identities and policies inside an account (issue 63).
    Iam,
    /// STS's short-lived credentials.
    Sts,
    /// CloudTrail's LookupEvents over the audit trail.
    CloudTrail,
}

impl Service {
    pub fn model(self) -> &'static Model {
        static AUTOSCALING: OnceLock<Model> = OnceLock::new();
        static CLOUDWATCH: OnceLock<Model> = OnceLock::new();
        static IAM: OnceLock<Model> = OnceLock::new();
        static STS: OnceLock<Model> = OnceLock::new();
        static CLOUDTRAIL: OnceLock<Model> = OnceLock::new();
        match self {
            Self::AutoScaling => AUTOSCALING.get_or_init(|| {
                serde_json::from_str(include_str!("../model/autoscaling-2011-01-01.json"))
                    .expect("the embedded Auto Scaling model is valid")
            }),
            Self::CloudWatch => CLOUDWATCH.get_or_init(|| {
                serde_json::from_str(include_str!("../model/cloudwatch-2010-08-01.json"))
                    .expect("the embedded CloudWatch model is valid")
            }),
            Self::Iam => IAM.get_or_init(|| {
                serde_json::from_str(include_str!("../model/iam-2010-05-08.json"))
                    .expect("the embedded IAM model is valid")
            }),
            Self::Sts => STS.get_or_init(|| {
                serde_json::from_str(include_str!("../model/sts-2011-06-15.json"))
                    .expect("the embedded STS model is valid")
            }),
            Self::CloudTrail => CLOUDTRAIL.get_or_init(|| {
                serde_json::from_str(include_str!("../model/cloudtrail-2013-11-01.json"))
                    .expect("the embedded CloudTrail model is valid")
            }),
        }
    }

    /// The Query protocol's `Version`.
    pub fn version(self) -> &'static str {
        match self {
            Self::AutoScaling => API_VERSION,
            Self::CloudWatch => "2010-08-01",
            Self::Iam => "2010-05-08",
            Self::Sts => "2011-06-15",
            Self::CloudTrail => "2013-11-01",
        }
    }

    pub fn xml_namespace(self) -> &'static str {
        match self {
            Self::AutoScaling => XML_NAMESPACE,
            Self::CloudWatch => "http://monitoring.amazonaws.com/doc/2010-08-01/",
            Self::Iam => "https://iam.amazonaws.com/doc/2010-05-08/",
            Self::Sts => "https://sts.amazonaws.com/doc/2011-06-15/",
            // CloudTrail speaks JSON 1.1 only.
            Self::CloudTrail => "",
        }
    }

    /// The name a SigV4 credential is scoped to.
    pub fn signing_name(self) -> &'static str {
        match self {
            Self::AutoScaling => "autoscaling",
            Self::CloudWatch => "monitoring",
            Self::Iam => "iam",
            Self::Sts => "sts",
            Self::CloudTrail => "cloudtrail",
        }
    }

    pub fn shape(self, name: &str) -> &'static Shape {
        self.model()
            .shapes
            .get(name)
            .unwrap_or_else(|| panic!("shape {name} is in the {self:?} model"))
    }

    /// The members of a structure shape, in model order: (wire name, member shape name).
    pub fn members(self, shape_name: &str) -> Vec<(&'static str, &'static str)> {
        match self.shape(shape_name) {
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
}

#[derive(Debug, Deserialize)]
pub struct Model {
    pub metadata: Metadata,
    pub operations: BTreeMap<String, Operation>,
    pub shapes: BTreeMap<String, Shape>,
}

#[derive(Debug, Deserialize)]
pub struct Operation {
    pub input: Option<ShapeRef>,
    pub output: Option<OutputRef>,
    /// The errors the model documents for it.
    #[serde(default)]
    pub errors: Vec<ShapeRef>,
}

#[derive(Debug, Deserialize)]
pub struct ErrorCode {
    /// Absent: the shape's name is its code.
    pub code: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Metadata {
    /// The JSON and CBOR protocols' `X-Amz-Target` prefix and service name.
    #[serde(rename = "targetPrefix")]
    pub target_prefix: Option<String>,
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
        /// An error shape's Query code (`InvalidParameterValue` for
        /// `InvalidParameterValueException`).
        error: Option<ErrorCode>,
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
    /// A double, or a float (CloudTrail's), written alike.
    #[serde(alias = "float")]
    Double {
        min: Option<f64>,
        max: Option<f64>,
    },
    /// A 64-bit integer.
    Long {
        min: Option<i64>,
        max: Option<i64>,
    },
    Boolean {},
    Timestamp {},
    /// Key to value (`Name.entry.N.key` / `.value` in the Query protocol).
    Map {
        key: ShapeRef,
        value: ShapeRef,
        min: Option<i64>,
        max: Option<i64>,
    },
    Blob {},
}

/// Auto Scaling's model.
pub fn model() -> &'static Model {
    Service::AutoScaling.model()
}

pub fn shape(name: &str) -> &'static Shape {
    Service::AutoScaling.shape(name)
}

/// The members of one of Auto Scaling's structure shapes (`Service::members`).
pub fn members(shape_name: &str) -> Vec<(&'static str, &'static str)> {
    Service::AutoScaling.members(shape_name)
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
