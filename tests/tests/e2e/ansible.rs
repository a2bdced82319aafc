//! Ansible drives Phantom unmodified: the amazon.aws and community.aws collections' modules
//! (autoscaling_launch_config, autoscaling_group with wait_for_instances, autoscaling_group_info)
//! run `tests/ansible/group.yml` against the local stack, with each service's endpoint in the
//! environment as an Ansible user sets it. Ansible comes from `tests/ansible/install.sh`, which the
//! test runs first (quick when Ansible is there). Create, scale out, the same play again (nothing
//! changed), replace every instance, delete; and `tests/ansible/refresh.yml`, a rolling update
//! with autoscaling_instance_refresh and its _info module; `tests/ansible/scheduled.yml`, a
//! recurring scheduled action with a StartTime, put twice.

use phantom_e2e::{stack, User};
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

fn venv() -> PathBuf {
    std::env::var_os("PHANTOM_ANSIBLE_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").expect("HOME is set"))
                .join(".cache/phantom/ansible")
        })
}

/// Runs the play `tests/ansible/<book>` with `vars`; returns the recap's `changed` count, or
/// panics with the output.
fn play_book(u: &User, book: &str, vars: &str) -> usize {
    let s = stack();
    let venv = venv();
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let ok = Command::new(s.root.join("tests/ansible/install.sh"))
            .env("PHANTOM_ANSIBLE_VENV", &venv)
            .status()
            .expect("tests/ansible/install.sh runs")
            .success();
        assert!(ok, "tests/ansible/install.sh failed");
    });
    let bin = venv.join("bin/ansible-playbook");
    let out = Command::new(bin)
        .arg(s.root.join("tests/ansible").join(book))
        .args(["-i", "localhost,", "-e", vars])
        .arg("-e")
        .arg(format!(
            "ansible_python_interpreter={}",
            venv.join("bin/python").display()
        ))
        .env("AWS_ACCESS_KEY_ID", &u.access_key_id)
        .env("AWS_SECRET_ACCESS_KEY", &u.secret)
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL_AUTO_SCALING", &s.url)
        .env("AWS_ENDPOINT_URL_EC2", s.cloud_url("hotel"))
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_LOCALHOST_WARNING", "false")
        .env("ANSIBLE_INVENTORY_UNPARSED_WARNING", "false")
        .env("ANSIBLE_HOME", std::env::temp_dir().join("phantom-ansible"))
        .output()
        .expect("ansible-playbook runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ansible-playbook -e '{vars}' failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recap = stdout
        .lines()
        .find(|l| l.starts_with("localhost") && l.contains("changed="))
        .unwrap_or_else(|| panic!("no recap in:\n{stdout}"));
    recap
        .split_whitespace()
        .find_map(|w| w.strip_prefix("changed="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no changed count in: {recap}"))
}

/// `group.yml` with `vars`.
fn play(u: &User, vars: &str) -> usize {
    play_book(u, "group.yml", vars)
}

async fn in_service(u: &User) -> Vec<String> {
    let g = stack()
        .sdk(u)
        .describe_auto_scaling_groups()
        .auto_scaling_group_names("web")
        .send()
        .await
        .unwrap();
    let mut ids: Vec<String> = g
        .auto_scaling_groups()
        .iter()
        .flat_map(|g| g.instances())
        .filter(|i| i.lifecycle_state().map(|s| s.as_str()) == Some("InService"))
        .filter_map(|i| i.instance_id().map(str::to_string))
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn an_ansible_play_creates_scales_replaces_and_deletes_a_group() {
    let s = stack();
    let u = s.new_user("ansible");

    let t = Instant::now();
    let changed = play(&u, "desired=2 state=present");
    eprintln!(
        "ansible: create to 2 InService (wait_for_instances) in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    assert!(
        changed >= 2,
        "the launch configuration and the group were made"
    );
    let first = in_service(&u).await;
    assert_eq!(first.len(), 2);
    // The propagated tag reached the VMs.
    let vms = s.vms("hotel", &u.name, "web");
    assert!(vms.iter().all(|v| v["Tags"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["Key"] == "env" && t["Value"] == "test")));

    assert_eq!(play(&u, "desired=3 state=present"), 1, "scaled out");
    assert_eq!(in_service(&u).await.len(), 3);
    assert_eq!(
        play(&u, "desired=3 state=present"),
        0,
        "the same play again changes nothing"
    );

    let before = in_service(&u).await;
    play(&u, "desired=3 state=present replace_all=true");
    let after = in_service(&u).await;
    assert_eq!(after.len(), 3);
    assert!(
        after.iter().all(|id| !before.contains(id)),
        "every instance replaced: {before:?} -> {after:?}"
    );

    play(&u, "desired=0 state=absent");
    let groups = s
        .sdk(&u)
        .describe_auto_scaling_groups()
        .send()
        .await
        .unwrap();
    assert!(groups.auto_scaling_groups().is_empty());
    let alive = s
        .vms("hotel", &u.name, "web")
        .into_iter()
        .filter(|v| v["State"]["Name"] == "running" || v["State"]["Name"] == "pending")
        .count();
    assert_eq!(alive, 0, "the group's VMs are gone");
}

#[tokio::test]
async fn an_ansible_play_refreshes_a_group_and_cancels_a_refresh() {
    let s = stack();
    let u = s.new_user("ansible-refresh");
    // The play asserts what the modules answer; here, that the old VMs are gone.
    play_book(&u, "refresh.yml", "desired=2");
    let alive = s
        .vms("hotel", &u.name, "rolling")
        .into_iter()
        .filter(|v| v["State"]["Name"] == "running" || v["State"]["Name"] == "pending")
        .count();
    assert_eq!(alive, 0, "the group's VMs are gone");
}

#[tokio::test]
async fn an_ansible_scheduled_action_with_a_start_time_is_put_once() {
    let u = stack().new_user("ansible-sched");
    // Tomorrow at 08:00 UTC, and 22:40 on weekdays after.
    let tomorrow = phantom_model::time::now_ms() / 86_400_000 + 1;
    let start = phantom_model::time::format_timestamp(phantom_model::time::from_ms(
        tomorrow * 86_400_000 + 8 * 3_600_000,
    ));
    let vars = format!("start={start}");
    assert_eq!(play_book(&u, "scheduled.yml", &vars), 3, "all three made");
    assert_eq!(
        play_book(&u, "scheduled.yml", &vars),
        0,
        "the same play again changes nothing"
    );
}
