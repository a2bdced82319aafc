//! Launch templates, pure: a group's `LaunchTemplate` or `MixedInstancesPolicy` (as
//! CreateAutoScalingGroup and UpdateAutoScalingGroup take them and Describe gives them back), and
//! what the provisioner asks the cloud for. The template lives on the group's cloud: `web@sierra`
//! names template `web` on cloud `sierra` (an id may carry `@<cloud>` too), a name without `@`
//! the default cloud. The cloud resolves the template at RunInstances, with the user's
//! credentials there, as EC2 does for an AWS group.

use crate::weights::Weights;
use phantom_model::group::{LaunchTemplateSpecification, MixedInstancesPolicy};
use phantom_model::instance_type::{InstanceRequirements, InstanceTypeInfo};
use phantom_model::{Checked, Refusal};
use std::collections::BTreeMap;

/// Which template, as RunInstances names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateRef {
    pub id: Option<String>,
    pub name: Option<String>,
    /// `$Latest`, `$Default` or a version number.
    pub version: String,
}

/// A group's template: which, on which cloud (`None`: the default cloud), and the instance types
/// to try in order (a MixedInstancesPolicy's overrides; empty: the template's own type).
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub template: TemplateRef,
    pub cloud: Option<String>,
    pub instance_types: Vec<String>,
    /// The overrides' weights (`WeightedCapacity`), if they give them.
    pub weights: Weights,
    /// The templates of the instance types whose overrides name their own (on the same cloud).
    pub by_type: BTreeMap<String, TemplateRef>,
    /// Overrides that give the attributes of their instance types (`InstanceRequirements`),
    /// each with its own template if it names one; the types come from the cloud at launch
    /// (`Spec::resolved`).
    pub requirements: Vec<(InstanceRequirements, Option<TemplateRef>)>,
}

fn split_cloud(s: &str, what: &str) -> Checked<(String, Option<String>)> {
    match s.rsplit_once('@') {
        None => Ok((s.to_string(), None)),
        Some((n, c)) if !n.is_empty() && !c.is_empty() => Ok((n.to_string(), Some(c.to_string()))),
        Some(_) => Err(Refusal::invalid(format!(
            "{what} '{s}' must be <template>@<cloud>, both parts non-empty."
        ))),
    }
}

fn specification(v: &LaunchTemplateSpecification) -> Checked<(TemplateRef, Option<String>)> {
    let (id, name, cloud) = match (&v.launch_template_id, &v.launch_template_name) {
        (Some(id), None) => {
            let (id, cloud) = split_cloud(id, "LaunchTemplateId")?;
            (Some(id), None, cloud)
        }
        (None, Some(name)) => {
            let (name, cloud) = split_cloud(name, "LaunchTemplateName")?;
            (None, Some(name), cloud)
        }
        _ => return Err(Refusal::invalid(
            "Valid requests must contain either launchTemplateId or LaunchTemplateName, not both.",
        )),
    };
    // AWS's default version.
    let version = v.version.clone().unwrap_or_else(|| "$Default".to_string());
    let numbered = !version.is_empty()
        && version.bytes().all(|b| b.is_ascii_digit())
        && !version.starts_with('0');
    if !(version == "$Latest" || version == "$Default" || numbered) {
        return Err(Refusal::invalid(format!(
            "Invalid launch template version '{version}': give $Latest, $Default or a version number."
        )));
    }
    Ok((TemplateRef { id, name, version }, cloud))
}

/// The template a group's `LaunchTemplate` or `MixedInstancesPolicy` names, if either is given,
/// checked.
pub fn of(
    lt: Option<&LaunchTemplateSpecification>,
    mip: Option<&MixedInstancesPolicy>,
) -> Checked<Option<Spec>> {
    if lt.is_some() && mip.is_some() {
        return Err(Refusal::invalid(
            "Give either LaunchTemplate or MixedInstancesPolicy, not both.",
        ));
    }
    if let Some(lt) = lt {
        let (template, cloud) = specification(lt)?;
        return Ok(Some(Spec {
            template,
            cloud,
            instance_types: Vec::new(),
            weights: Weights::none(),
            by_type: BTreeMap::new(),
            requirements: Vec::new(),
        }));
    }
    let Some(mip) = mip else {
        return Ok(None);
    };
    let Some((lt, overrides)) = mip
        .launch_template
        .as_ref()
        .and_then(|l| Some((l.launch_template_specification.as_ref()?, &l.overrides)))
    else {
        return Err(Refusal::invalid(
            "MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification is required.",
        ));
    };
    let (template, cloud) = specification(lt)?;
    let mut instance_types = Vec::new();
    let mut weighted = Vec::new();
    let mut by_type = BTreeMap::new();
    let mut requirements = Vec::new();
    for o in overrides {
        let which = o.instance_type.as_deref().unwrap_or("InstanceRequirements");
        let own = match &o.launch_template_specification {
            Some(lt) => {
                let (own, on) = specification(lt)?;
                if on != cloud {
                    return Err(Refusal::invalid(format!(
                        "The launch template of override {which} must be on the cloud of the group's launch template ({}), not {}.",
                        cloud.as_deref().unwrap_or("the default cloud"),
                        on.as_deref().unwrap_or("the default cloud")
                    )));
                }
                Some(own)
            }
            None => None,
        };
        match (&o.instance_type, &o.instance_requirements) {
            (Some(_), Some(_)) => {
                return Err(Refusal::invalid(
                    "A MixedInstancesPolicy override gives either InstanceType or InstanceRequirements, not both.",
                ))
            }
            (None, None) => {
                return Err(Refusal::invalid(
                    "Each MixedInstancesPolicy override needs an InstanceType or InstanceRequirements.",
                ))
            }
            (None, Some(r)) => {
                crate::requirements::check(r)?;
                if o.weighted_capacity.is_some() {
                    return Err(Refusal::invalid(
                        "WeightedCapacity is not taken with InstanceRequirements: count capacity in vCPUs or memory with DesiredCapacityType.",
                    ));
                }
                requirements.push((r.clone(), own));
            }
            (Some(t), None) => {
                instance_types.push(t.clone());
                weighted.push((t.clone(), o.weighted_capacity.clone()));
                if let Some(own) = own {
                    by_type.insert(t.clone(), own);
                }
            }
        }
    }
    if !instance_types.is_empty() && !requirements.is_empty() {
        return Err(Refusal::invalid(
            "Give InstanceType on every MixedInstancesPolicy override or InstanceRequirements on every one, not both kinds.",
        ));
    }
    let weights = Weights::of(&weighted)?;
    if let Some(d) = &mip.instances_distribution {
        crate::distribution::Distribution::of(d)?;
    }
    Ok(Some(Spec {
        template,
        cloud,
        instance_types,
        weights,
        by_type,
        requirements,
    }))
}

impl Spec {
    /// With InstanceRequirements: the cloud's instance types that match (`offered`), in the
    /// order a launch tries them (each override's in turn), with their templates, and weighing
    /// what `capacity_type` counts of them. Without: as it is.
    pub fn resolved(&self, offered: &[InstanceTypeInfo], capacity_type: &str) -> Spec {
        if self.requirements.is_empty() {
            return self.clone();
        }
        let mut spec = self.clone();
        let mut units = Vec::new();
        for (r, own) in &self.requirements {
            for t in crate::requirements::select(r, offered) {
                if spec.instance_types.contains(&t.name) {
                    continue;
                }
                spec.instance_types.push(t.name.clone());
                units.push((t.name.clone(), crate::requirements::units(capacity_type, t)));
                if let Some(own) = own {
                    spec.by_type.insert(t.name.clone(), own.clone());
                }
            }
        }
        // In units, each VM is one, and shows no weight.
        spec.weights = if capacity_type == "units" {
            Weights::none()
        } else {
            Weights::of_types(&units)
        };
        spec
    }

    /// The template VMs of instance type `t` launch from: its override's, else the group's.
    pub fn template_for(&self, t: Option<&str>) -> &TemplateRef {
        t.and_then(|t| self.by_type.get(t))
            .unwrap_or(&self.template)
    }

    /// Every template the group launches from: its own, then its overrides' (each once).
    pub fn templates(&self) -> Vec<&TemplateRef> {
        let mut all = vec![&self.template];
        for t in self.by_type.values() {
            if !all.contains(&t) {
                all.push(t);
            }
        }
        all
    }

    /// The cloud the template lives on: the one it names, else the default cloud.
    pub fn cloud_or(&self, default_cloud: Option<&str>) -> Checked<String> {
        self.cloud
            .clone()
            .or_else(|| default_cloud.map(str::to_string))
            .ok_or_else(|| {
                Refusal::invalid(
                    "The launch template names no cloud and no default cloud is set: use <template>@<cloud>.",
                )
            })
    }
}

/// A group from a template needs a cloud with launch templates (as registered).
pub fn check_cloud(cloud: &str, has_templates: bool) -> Checked<()> {
    if has_templates {
        Ok(())
    } else {
        Err(Refusal::invalid(format!(
            "Cloud '{cloud}' has no launch templates (it is registered without them): use a launch configuration there."
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// The template of a group's request, as the decoder gives it.
    fn of_request(input: &Value) -> Checked<Option<Spec>> {
        let s: phantom_model::request::GroupSettings =
            serde_json::from_value(input.clone()).expect("a request");
        of(
            s.launch_template.as_ref(),
            s.mixed_instances_policy.as_ref(),
        )
    }

    #[test]
    fn names_ids_versions_and_clouds() {
        let s = of_request(
            &json!({"LaunchTemplate": {"LaunchTemplateName": "web@sierra", "Version": "$Latest"}}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.template.name.as_deref(), Some("web"));
        assert_eq!(s.cloud.as_deref(), Some("sierra"));
        assert_eq!(s.template.version, "$Latest");
        let s = of_request(&json!({"LaunchTemplate": {"LaunchTemplateId": "lt-0abc"}}))
            .unwrap()
            .unwrap();
        assert_eq!((s.template.id.as_deref(), s.cloud), (Some("lt-0abc"), None));
        assert_eq!(s.template.version, "$Default");
        assert_eq!(
            of_request(&json!({"LaunchConfigurationName": "x"})).unwrap(),
            None
        );
        for bad in [
            json!({"LaunchTemplate": {}}),
            json!({"LaunchTemplate": {"LaunchTemplateId": "lt-1", "LaunchTemplateName": "n"}}),
            json!({"LaunchTemplate": {"LaunchTemplateName": "web@"}}),
            json!({"LaunchTemplate": {"LaunchTemplateName": "web", "Version": "latest"}}),
            json!({"LaunchTemplate": {"LaunchTemplateName": "web", "Version": "01"}}),
        ] {
            assert!(of_request(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mixed_instances_policies_give_the_types_in_order_and_check_the_split() {
        let mip = |dist: Value, overrides: Value| {
            json!({"MixedInstancesPolicy": {
                "LaunchTemplate": {
                    "LaunchTemplateSpecification": {"LaunchTemplateName": "web@hotel", "Version": "2"},
                    "Overrides": overrides},
                "InstancesDistribution": dist}})
        };
        let s = of_request(&mip(
            json!({"OnDemandAllocationStrategy": "prioritized", "OnDemandPercentageAboveBaseCapacity": 100}),
            json!([{"InstanceType": "m5.large"}, {"InstanceType": "m4.large"}]),
        ))
        .unwrap()
        .unwrap();
        assert_eq!(s.instance_types, ["m5.large", "m4.large"]);
        assert_eq!(s.template.version, "2");
        let refused = |d, o| of_request(&mip(d, o)).unwrap_err().message().to_string();
        // Spot and on-demand, split as AWS splits them (`phantom_rules::distribution`).
        assert!(of_request(&mip(
            json!({"OnDemandPercentageAboveBaseCapacity": 50, "SpotAllocationStrategy": "capacity-optimized"}),
            json!([{"InstanceType": "m5.large"}])
        ))
        .is_ok());
        assert!(refused(
            json!({"OnDemandPercentageAboveBaseCapacity": 150}),
            json!([])
        )
        .contains("between 0 and 100"));
        // Weights, on all overrides or none.
        let weighted = of_request(&mip(
            json!({}),
            json!([{"InstanceType": "a", "WeightedCapacity": "2"}, {"InstanceType": "b", "WeightedCapacity": "1"}]),
        ))
        .unwrap()
        .unwrap();
        assert_eq!(weighted.weights.of_type("a"), Some(2));
        assert!(refused(
            json!({}),
            json!([{"InstanceType": "a", "WeightedCapacity": "2"}, {"InstanceType": "b"}])
        )
        .contains("WeightedCapacity"));
        assert!(of_request(&json!({"MixedInstancesPolicy": {}})).is_err());
    }
}
