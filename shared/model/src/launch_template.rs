//! What a group launches from besides a launch configuration: a launch template and its version
//! (as a group, a refresh and an instance name it), or a mixed instances policy.

use serde::{Deserialize, Serialize};

/// A launch template and its version (botocore's `LaunchTemplateSpecification`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct LaunchTemplateSpecification {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A launch template as its cloud names it (DescribeLaunchTemplateVersions): both its id and its
/// name, whichever a group gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TemplateName {
    pub launch_template_id: String,
    pub launch_template_name: String,
}

impl LaunchTemplateSpecification {
    /// As Describe shows it: the id and the name both where `known` has the template (each with
    /// the `@<cloud>` the group gave), as AWS always shows both; the version as given.
    pub fn named(&self, known: &[TemplateName]) -> Self {
        let split = |s: &str| match s.rsplit_once('@') {
            Some((n, c)) => (n.to_string(), format!("@{c}")),
            None => (s.to_string(), String::new()),
        };
        let found = match (&self.launch_template_id, &self.launch_template_name) {
            (Some(id), None) => {
                let (id, at) = split(id);
                known
                    .iter()
                    .find(|k| k.launch_template_id == id)
                    .map(|k| (k, at))
            }
            (None, Some(name)) => {
                let (name, at) = split(name);
                known
                    .iter()
                    .find(|k| k.launch_template_name == name)
                    .map(|k| (k, at))
            }
            _ => None,
        };
        match found {
            Some((k, at)) => Self {
                launch_template_id: Some(format!("{}{at}", k.launch_template_id)),
                launch_template_name: Some(format!("{}{at}", k.launch_template_name)),
                version: self.version.clone(),
            },
            None => self.clone(),
        }
    }
}

impl MixedInstancesPolicy {
    /// As Describe shows it: each template with its id and its name (`LaunchTemplateSpecification::named`).
    pub fn named(&self, known: &[TemplateName]) -> Self {
        let mut shown = self.clone();
        if let Some(lt) = &mut shown.launch_template {
            if let Some(spec) = &mut lt.launch_template_specification {
                *spec = spec.named(known);
            }
            for o in &mut lt.overrides {
                if let Some(spec) = &mut o.launch_template_specification {
                    *spec = spec.named(known);
                }
            }
        }
        shown
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MixedInstancesPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template: Option<MixedLaunchTemplate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances_distribution: Option<InstancesDistribution>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct MixedLaunchTemplate {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template_specification: Option<LaunchTemplateSpecification>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<Override>,
}

/// One instance type to try, or the attributes of those to try (checked by `template::of`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Override {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// The capacity units a VM of this type counts for (`phantom_rules::weights`), as AWS's model
    /// gives it: a string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weighted_capacity: Option<String>,
    /// The template VMs of this type launch from, instead of the group's (on the group's
    /// template's cloud).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_template_specification: Option<LaunchTemplateSpecification>,
    /// The attributes of the instance types to run (attribute-based instance type selection),
    /// instead of an InstanceType.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_requirements: Option<super::instance_type::InstanceRequirements>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct InstancesDistribution {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_demand_allocation_strategy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_demand_base_capacity: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_demand_percentage_above_base_capacity: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_allocation_strategy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_instance_pools: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_max_price: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: Option<&str>, name: Option<&str>) -> LaunchTemplateSpecification {
        LaunchTemplateSpecification {
            launch_template_id: id.map(str::to_string),
            launch_template_name: name.map(str::to_string),
            version: Some("$Latest".into()),
        }
    }

    #[test]
    fn a_template_is_shown_by_id_and_name_with_the_cloud_it_was_given_with() {
        let known = [TemplateName {
            launch_template_id: "lt-1".into(),
            launch_template_name: "web".into(),
        }];
        assert_eq!(
            spec(None, Some("web@sierra")).named(&known),
            spec(Some("lt-1@sierra"), Some("web@sierra"))
        );
        assert_eq!(
            spec(Some("lt-1"), None).named(&known),
            spec(Some("lt-1"), Some("web"))
        );
        // Unknown (the cloud could not be asked): as given.
        assert_eq!(spec(None, Some("db")).named(&known), spec(None, Some("db")));
    }
}
