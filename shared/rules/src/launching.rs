//! What a group launches from now: its launch configuration or template, or a running
//! refresh's DesiredConfiguration while the refresh goes forward.

use phantom_model::group::{Group, LaunchTemplateSpecification, MixedInstancesPolicy, Settings};
use phantom_model::refresh::{DesiredConfiguration, Source};

/// What a group launches from: a launch configuration, or a launch template (alone or in a mixed
/// instances policy).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Launching<'a> {
    pub launch_configuration: Option<&'a str>,
    pub launch_template: Option<&'a LaunchTemplateSpecification>,
    pub mixed_instances_policy: Option<&'a MixedInstancesPolicy>,
}

impl<'a> Launching<'a> {
    pub fn of_settings(s: &'a Settings) -> Self {
        Self {
            launch_configuration: s.launch_configuration_name.as_deref(),
            launch_template: s.launch_template.as_ref(),
            mixed_instances_policy: s.mixed_instances_policy.as_ref(),
        }
    }

    pub fn of_desired(d: &'a DesiredConfiguration) -> Self {
        Self {
            launch_configuration: None,
            launch_template: d.launch_template.as_ref(),
            mixed_instances_policy: d.mixed_instances_policy.as_ref(),
        }
    }

    /// As its instances record it (a mixed instances policy by its template).
    pub fn source(&self) -> Source {
        Source {
            launch_configuration: self.launch_configuration.map(str::to_string),
            launch_template: self
                .launch_template
                .or_else(|| {
                    self.mixed_instances_policy?
                        .launch_template
                        .as_ref()?
                        .launch_template_specification
                        .as_ref()
                })
                .cloned(),
        }
    }
}

/// What `g` launches from now: a running refresh's DesiredConfiguration while the refresh goes
/// forward, else its own launch configuration or template.
pub fn of(g: &Group) -> Launching<'_> {
    match crate::refresh::launching(&g.settings.instance_refreshes) {
        Some(d) => Launching::of_desired(d),
        None => Launching::of_settings(&g.settings),
    }
}
