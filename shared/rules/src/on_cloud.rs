//! The names a group across clouds launches from on each of its clouds: the launch configuration
//! or template of one name on each (`web@hotel` is `web@sierra` on sierra).

use phantom_model::group::LaunchTemplateSpecification;

/// The launch configuration a group made from `launch_configuration` (`web@hotel`) uses on
/// `cloud` (`web@sierra`).
pub fn launch_configuration(launch_configuration: &str, cloud: &str) -> String {
    let base = launch_configuration
        .rsplit_once('@')
        .map(|(b, _)| b)
        .unwrap_or(launch_configuration);
    format!("{base}@{cloud}")
}

/// The launch template of the group's template's name on `cloud` (`fleet@hotel` ->
/// `fleet@sierra`), at the same version; one given by id is left as it is.
pub fn launch_template(
    t: &LaunchTemplateSpecification,
    cloud: &str,
) -> LaunchTemplateSpecification {
    LaunchTemplateSpecification {
        launch_template_name: t
            .launch_template_name
            .as_deref()
            .map(|n| launch_configuration(n, cloud)),
        ..t.clone()
    }
}
