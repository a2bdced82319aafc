//! Application health for any cloud (issue 60): a group's probe (tag `phantom:health-probe`) calls
//! each serving VM's application at its address, here a real HTTP or TCP server per VM on the
//! memory cloud's loopback address for it. A VM whose application starts answering 500, or stops
//! listening, is marked Unhealthy after its threshold and replaced, and its replacement passes;
//! one failure less than the threshold changes nothing; a new VM failing within its grace period is
//! not judged; suspended HealthCheck probes nothing; a tag that does not read is refused.

use crate::provisioning::{activities, in_service};
use crate::{invalid, Given};
use aws_sdk_autoscaling::types::Tag;
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_seams::cloud::memory::MemoryCloud;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The VMs' applications: one server per VM, on its address and the probe's port, answering
/// each request with the status its VM is told (0: it stops listening).
struct Apps {
    port: u16,
    servers: Mutex<BTreeMap<String, Server>>,
    /// Served over TLS, with a self-signed certificate, where set.
    tls: Option<tokio_rustls::TlsAcceptor>,
}

/// A VM's application: the status it answers, and its task.
type Server = (Arc<AtomicU16>, tokio::task::JoinHandle<()>);

impl Apps {
    fn new() -> Self {
        Self {
            port: phantom_e2e::free_port(),
            servers: Mutex::new(BTreeMap::new()),
            tls: None,
        }
    }

    /// The same over TLS, with a self-signed certificate made by openssl (a VM's is seldom signed
    /// by anyone a prober trusts).
    fn over_tls() -> Self {
        let dir = std::env::temp_dir().join(format!("phantom-probe-{}", phantom_e2e::free_port()));
        std::fs::create_dir_all(&dir).unwrap();
        let run = |args: &[&str]| {
            let out = std::process::Command::new("openssl")
                .args(args)
                .current_dir(&dir)
                .output()
                .expect("openssl runs");
            assert!(out.status.success(), "openssl {args:?}: {out:?}");
        };
        run(&[
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-outform",
            "DER", "-out", "cert.der", "-days", "1", "-subj", "/CN=vm",
        ]);
        run(&[
            "pkcs8", "-topk8", "-nocrypt", "-in", "key.pem", "-outform", "DER", "-out", "key.der",
        ]);
        let cert =
            rustls::pki_types::CertificateDer::from(std::fs::read(dir.join("cert.der")).unwrap());
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(
            std::fs::read(dir.join("key.der")).unwrap(),
        );
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key.into())
        .expect("a certificate and its key");
        std::fs::remove_dir_all(&dir).ok();
        Self {
            tls: Some(tokio_rustls::TlsAcceptor::from(Arc::new(config))),
            ..Self::new()
        }
    }

    /// Starts a server answering 200 for each VM of the cloud that has none yet.
    async fn serve(&self, cloud: &MemoryCloud) {
        for vm in cloud.vms() {
            if self.servers.lock().unwrap().contains_key(&vm.id) {
                continue;
            }
            let status = Arc::new(AtomicU16::new(200));
            let listener = tokio::net::TcpListener::bind((vm.address().as_str(), self.port))
                .await
                .expect("a VM's address on loopback");
            let answer = status.clone();
            let tls = self.tls.clone();
            let task = tokio::spawn(async move {
                loop {
                    let Ok((conn, _)) = listener.accept().await else {
                        return;
                    };
                    let code = answer.load(Ordering::SeqCst);
                    match &tls {
                        Some(tls) => {
                            if let Ok(mut conn) = tls.accept(conn).await {
                                reply(&mut conn, code).await;
                            }
                        }
                        None => reply(&mut { conn }, code).await,
                    }
                }
            });
            self.servers.lock().unwrap().insert(vm.id, (status, task));
        }
    }

    /// The VM's application answers `code` from now on.
    fn answer(&self, id: &str, code: u16) {
        self.servers.lock().unwrap()[id]
            .0
            .store(code, Ordering::SeqCst);
    }

    /// The VM's application stops listening.
    fn stop(&self, id: &str) {
        self.servers.lock().unwrap()[id].1.abort();
    }
}

/// Reads a request and answers it with `code`.
async fn reply<S: AsyncReadExt + AsyncWriteExt + Unpin>(conn: &mut S, code: u16) {
    let mut buf = [0u8; 1024];
    let _ = conn.read(&mut buf).await;
    let reply = format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    let _ = conn.write_all(reply.as_bytes()).await;
    let _ = conn.shutdown().await;
}

/// Sets the group's probe.
async fn probe(c: &aws_sdk_autoscaling::Client, value: &str) {
    crate::tag_web(c, "phantom:health-probe", value).await;
}

fn tag(value: &str) -> Tag {
    crate::group_tag("web", "phantom:health-probe", value)
}

/// Runs second by second (each second the health check runs: its probes too), serving every new
/// VM's application, until `gone` has left the group and it has `n` InService again: the seconds
/// that took.
async fn replaced(w: &World, u: &User, apps: &Apps, gone: &str, n: usize, secs: u64) -> u64 {
    for s in 0..=secs {
        apps.serve(&w.hotel).await;
        let serving = in_service(w, u, "web").await;
        if serving.len() == n && !serving.iter().any(|id| id == gone) {
            return s;
        }
        w.run_for(1).await;
    }
    panic!(
        "{gone} not replaced within {secs} s: {:?}, {:?}",
        in_service(w, u, "web").await,
        activities(w, u, "web")
            .await
            .iter()
            .map(|a| a.cause().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    );
}

async fn causes(w: &World, u: &User) -> Vec<String> {
    activities(w, u, "web")
        .await
        .iter()
        .filter_map(|a| a.cause().map(str::to_string))
        .filter(|c| c.contains("in response to an application health check failure"))
        .collect()
}

#[tokio::test]
async fn an_app_answering_500_is_replaced_after_its_threshold_and_its_replacement_passes() {
    let (Given { w, u, c }, ids) = Given::converged("probe500", 0, 5, 2).await;
    let apps = Apps::new();
    apps.serve(&w.hotel).await;
    probe(
        &c,
        &format!("http://:{}/healthz?interval=5&unhealthy=2", apps.port),
    )
    .await;
    // Passing, the VMs stay.
    w.run_for(30).await;
    assert_eq!(in_service(&w, &u, "web").await, ids);
    assert!(causes(&w, &u).await.is_empty());

    apps.answer(&ids[0], 500);
    let took = replaced(&w, &u, &apps, &ids[0], 2, 30).await;
    // Two failures 5 s apart, then the round: within interval x threshold + 2 s.
    assert!(took <= 12, "replaced {took} s after its application failed");
    let found = causes(&w, &u).await;
    assert_eq!(found.len(), 1, "{found:?}");
    let host = w
        .hotel
        .vms()
        .into_iter()
        .find(|v| v.id == ids[0])
        .unwrap()
        .address();
    assert!(
        found[0].contains(&format!(
            "(http://{host}:{}/healthz failed 2 probes in a row since",
            apps.port
        )) && found[0].ends_with(": HTTP 500)."),
        "{}",
        found[0]
    );
    // The replacement's application answers: it stays, and nothing more is replaced.
    w.run_for(60).await;
    let now = in_service(&w, &u, "web").await;
    assert_eq!(now.len(), 2);
    assert!(now.contains(&ids[1]));
    assert_eq!(causes(&w, &u).await.len(), 1);
}

#[tokio::test]
async fn one_failure_short_of_the_threshold_changes_nothing() {
    let (Given { w, u, c }, ids) = Given::converged("probeblip", 0, 5, 1).await;
    let apps = Apps::new();
    apps.serve(&w.hotel).await;
    probe(
        &c,
        &format!("http://:{}/?interval=5&unhealthy=3", apps.port),
    )
    .await;
    w.run_for(10).await;
    for _ in 0..3 {
        apps.answer(&ids[0], 503);
        w.run_for(10).await;
        apps.answer(&ids[0], 200);
        w.run_for(5).await;
    }
    assert_eq!(in_service(&w, &u, "web").await, ids);
}

#[tokio::test]
async fn a_tcp_probe_replaces_a_vm_that_stops_listening() {
    let (Given { w, u, c }, ids) = Given::converged("probetcp", 0, 5, 1).await;
    let apps = Apps::new();
    apps.serve(&w.hotel).await;
    probe(&c, &format!("tcp://:{}?interval=5&unhealthy=1", apps.port)).await;
    // A probe set is taken up within 30 s (the prober reads its groups that often).
    w.run_for(30).await;
    assert_eq!(in_service(&w, &u, "web").await, ids);
    apps.stop(&ids[0]);
    replaced(&w, &u, &apps, &ids[0], 1, 15).await;
    let found = causes(&w, &u).await;
    assert!(found[0].contains("connection failed"), "{}", found[0]);
}

#[tokio::test]
async fn within_its_grace_period_a_new_vm_is_not_judged_and_suspended_health_checks_probe_nothing()
{
    let Given { w, u, c } = Given::lc("probegrace").await;
    c.create_auto_scaling_group()
        .auto_scaling_group_name("web")
        .launch_configuration_name("web@hotel")
        .min_size(0)
        .max_size(2)
        .desired_capacity(1)
        .health_check_grace_period(60)
        .tags(tag("tcp://:1?interval=5&unhealthy=1"))
        .send()
        .await
        .unwrap();
    // Nothing listens at port 1: every probe fails, but the VM is within its grace period.
    let first = w
        .until(30, "a VM InService", async || {
            in_service(&w, &u, "web").await.first().cloned()
        })
        .await;
    w.run_for(40).await;
    assert_eq!(
        in_service(&w, &u, "web").await,
        std::slice::from_ref(&first)
    );
    c.suspend_processes()
        .auto_scaling_group_name("web")
        .scaling_processes("HealthCheck")
        .send()
        .await
        .unwrap();
    w.run_for(60).await;
    assert_eq!(
        in_service(&w, &u, "web").await,
        std::slice::from_ref(&first),
        "no probes while suspended"
    );
    c.resume_processes()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    w.until(60, "the VM replaced once judged", async || {
        (!in_service(&w, &u, "web").await.contains(&first)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_probe_tag_that_does_not_read_is_refused() {
    let (Given { c, .. }, _) = Given::converged("probebad", 0, 5, 1).await;
    for (value, why) in [
        ("http://vm:80/", "give no host"),
        ("udp://:53", "not http, https, tcp or heartbeat"),
        ("http://:80/?interval=2", "interval must be"),
    ] {
        let message = invalid(c.create_or_update_tags().tags(tag(value)).send().await);
        assert!(message.contains(why), "{value}: {message}");
    }
}

#[tokio::test]
async fn an_https_probe_takes_a_self_signed_certificate_and_checks_the_status() {
    let (Given { w, u, c }, ids) = Given::converged("probetls", 0, 5, 1).await;
    let apps = Apps::over_tls();
    apps.serve(&w.hotel).await;
    probe(
        &c,
        &format!(
            "https://:{}/ready?interval=5&unhealthy=2&status=200-299",
            apps.port
        ),
    )
    .await;
    w.run_for(40).await;
    assert_eq!(
        in_service(&w, &u, "web").await,
        ids,
        "a self-signed certificate passes"
    );
    apps.answer(&ids[0], 302);
    replaced(&w, &u, &apps, &ids[0], 1, 15).await;
    let found = causes(&w, &u).await;
    assert!(
        found[0].contains(": HTTP 302)"),
        "outside 200-299: {}",
        found[0]
    );
}

#[tokio::test]
async fn a_crash_at_any_step_of_a_probes_verdict_still_replaces_the_vm_once() {
    for k in 1.. {
        let (Given { w, u, c }, ids) = Given::converged("probecrash", 0, 5, 1).await;
        let apps = Apps::new();
        apps.serve(&w.hotel).await;
        probe(
            &c,
            &format!("http://:{}/?interval=5&unhealthy=1", apps.port),
        )
        .await;
        w.run_for(30).await;
        apps.answer(&ids[0], 500);
        w.clock.advance_ms(5_000);
        // The probe's run, killed at its k-th store, cloud or queue call.
        let h = w.health();
        w.trip.arm(k);
        let crashed = tokio::select! {
            _ = h.probe() => false,
            _ = w.trip.tripped() => true,
        };
        w.trip.disarm();
        // Within a read of the targets (30 s) and a round, the VM is replaced, once.
        replaced(&w, &u, &apps, &ids[0], 1, 45).await;
        assert_eq!(
            w.hotel.launched_total(),
            2,
            "crash at step {k}: one replacement"
        );
        if !crashed {
            assert!(k > 3, "the probe's run took only {k} steps");
            return;
        }
    }
}

/// A group's heartbeat URL as its owner gets it (Phantom's own API), its path.
async fn heartbeat_path(w: &World, u: &User, group: &str) -> String {
    let (status, v) = crate::self_service::call(
        w,
        u,
        "GetHeartbeatUrl",
        serde_json::json!({"AutoScalingGroupName": group}),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let url = v["Url"].as_str().unwrap();
    url[url
        .find("/phantom/v1/heartbeats/")
        .expect("a heartbeat path")..]
        .to_string()
}

/// A VM's heartbeat, as its own curl sends it: no AWS signature.
async fn beat(w: &World, u: &User, path: &str, instance: &str) -> (u16, String) {
    w.raw(
        &u.access_key_id,
        &u.secret,
        "POST",
        &format!("{path}?instance={instance}"),
        "",
        None,
        |r| {
            r.headers
                .retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
        },
    )
    .await
}

#[tokio::test]
async fn a_vm_whose_heartbeats_stop_is_replaced_and_a_wrong_url_is_refused() {
    let (Given { w, u, c }, ids) = Given::converged("heartbeat", 0, 5, 2).await;
    // The URL is known before the tag is set (and before the group is made).
    let path = heartbeat_path(&w, &u, "web").await;
    assert_eq!(
        path,
        heartbeat_path(&w, &u, "web").await,
        "the same every time"
    );
    probe(&c, "heartbeat://?interval=10&unhealthy=3").await;
    // Both VMs call in every 10 s for two minutes: they stay.
    for _ in 0..12 {
        for id in &ids {
            assert_eq!(beat(&w, &u, &path, id).await.0, 200);
        }
        w.run_for(10).await;
    }
    assert_eq!(in_service(&w, &u, "web").await, ids);
    // The first goes silent: within three intervals (and a beat and a round) it is replaced.
    let mut secs = 0;
    while in_service(&w, &u, "web").await.contains(&ids[0]) {
        beat(&w, &u, &path, &ids[1]).await;
        w.run_for(1).await;
        secs += 1;
        assert!(secs <= 45, "not replaced within 45 s of its last heartbeat");
    }
    let found = causes(&w, &u).await;
    assert!(found[0].contains("(no heartbeat since"), "{}", found[0]);
    assert!(in_service(&w, &u, "web").await.contains(&ids[1]));
    // A mac for another group, or another key's, is refused as AWS refuses: 403, saying nothing.
    let other = path.replace("/web/", "/api/");
    let (status, body) = beat(&w, &u, &other, &ids[1]).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("AccessDenied"), "{body}");
    let (status, _) = beat(&w, &u, &path, "not-an-instance").await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn heartbeats_have_limits_of_their_own_sized_for_thousands_of_vms() {
    let (Given { w, u, c }, ids) = Given::converged("beatlimit", 0, 5, 1).await;
    let path = heartbeat_path(&w, &u, "web").await;
    // 2,000 at once pass (the API's own mutating burst is far smaller), then Throttling.
    for n in 0..2000 {
        let (status, body) = beat(&w, &u, &path, &ids[0]).await;
        assert_eq!(status, 200, "heartbeat {n}: {body}");
    }
    let (status, body) = beat(&w, &u, &path, &ids[0]).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("Throttling"), "{body}");
    // The user's API calls are not held back by them.
    c.describe_auto_scaling_groups().send().await.unwrap();
    c.set_desired_capacity()
        .auto_scaling_group_name("web")
        .desired_capacity(1)
        .send()
        .await
        .unwrap();
}
