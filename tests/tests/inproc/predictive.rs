//! Predictive scaling through aws-sdk-autoscaling, on the memory Prometheus holding two weeks of
//! hourly history: a policy put and described in AWS's shape, GetPredictiveScalingForecast's load
//! and capacity for the next 48 hours, nothing before a day of data; ForecastAndScale raising the
//! group's desired capacity to the hour's forecast its buffer before the hour, the hour's floor
//! kept by the other policies until the hour ends, MaxSize honoured or raised with its buffer.

use super::{causes, failure, group, Given};
use aws_sdk_autoscaling::primitives::DateTime;
use aws_sdk_autoscaling::types::{
    MetricDataQuery, PredefinedMetricPairType, PredictiveScalingConfiguration,
    PredictiveScalingCustomizedLoadMetric, PredictiveScalingCustomizedScalingMetric,
    PredictiveScalingMaxCapacityBreachBehavior, PredictiveScalingMetricSpecification,
    PredictiveScalingMode, PredictiveScalingPredefinedMetricPair,
};
use phantom_e2e::world::World;
use phantom_e2e::User;
use phantom_model::time::Clock;
use phantom_rules::forecast::{hour_of, HOUR_MS};
use phantom_seams::store::Groups;

/// The application's request rate, which the customized load metric sums.
const LOAD: &str = "app_requests";
/// node_exporter's CPU series, which the predefined pair reads.
const CPU: &str = "node_cpu_seconds_total";

/// Records `metric` at every hour of the two weeks before the current hour, as `at` gives it.
fn history(w: &World, metric: &str, at: impl Fn(i64) -> f64) {
    let now = hour_of(w.clock.now_ms());
    for k in (1..=14 * 24).rev() {
        let t = now - k * HOUR_MS;
        w.prometheus.record(metric, t, Some(at(t)));
    }
}

/// A day's requests a second: 100, and 300 in the hour of the day that `busy` starts.
fn busy_at(busy: i64) -> impl Fn(i64) -> f64 {
    move |t| {
        if (t - busy).rem_euclid(24 * HOUR_MS) == 0 {
            300.0
        } else {
            100.0
        }
    }
}

/// Moves the clock to half past the next hour: a run prepares the current hour, whatever the
/// time the test starts at.
fn half_past(w: &World) {
    let now = w.clock.now_ms();
    w.clock
        .advance_ms(hour_of(now) + HOUR_MS + HOUR_MS / 2 - now);
}

fn query(id: &str, expression: &str) -> MetricDataQuery {
    MetricDataQuery::builder()
        .id(id)
        .expression(expression)
        .build()
}

/// A target of 50 requests a second per VM over the customized load `sum(app_requests)`.
fn requests(
    mode: PredictiveScalingMode,
) -> aws_sdk_autoscaling::types::builders::PredictiveScalingConfigurationBuilder {
    requests_on(&format!("sum({LOAD})"), mode)
}

fn requests_on(
    load: &str,
    mode: PredictiveScalingMode,
) -> aws_sdk_autoscaling::types::builders::PredictiveScalingConfigurationBuilder {
    let spec = PredictiveScalingMetricSpecification::builder()
        .target_value(50.0)
        .customized_load_metric_specification(
            PredictiveScalingCustomizedLoadMetric::builder()
                .metric_data_queries(query("load", load))
                .build(),
        )
        .customized_scaling_metric_specification(
            PredictiveScalingCustomizedScalingMetric::builder()
                .metric_data_queries(query("scaling", &format!("avg({LOAD}{{$instances}})")))
                .build(),
        )
        .build();
    PredictiveScalingConfiguration::builder()
        .metric_specifications(spec)
        .mode(mode)
}

async fn put(
    w: &World,
    u: &User,
    name: &str,
    cfg: PredictiveScalingConfiguration,
) -> Result<(), (String, String)> {
    let r = w
        .sdk(u)
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name(name)
        .policy_type("PredictiveScaling")
        .predictive_scaling_configuration(cfg)
        .send()
        .await;
    r.map(|_| ()).map_err(|e| failure::<(), _>(Err(e)))
}

type Forecast = aws_sdk_autoscaling::operation::get_predictive_scaling_forecast::GetPredictiveScalingForecastOutput;

async fn forecast(
    w: &World,
    u: &User,
    policy: &str,
    hours: i64,
) -> Result<Forecast, (String, String)> {
    let start = hour_of(w.clock.now_ms());
    w.sdk(u)
        .get_predictive_scaling_forecast()
        .auto_scaling_group_name("web")
        .policy_name(policy)
        .start_time(DateTime::from_millis(start))
        .end_time(DateTime::from_millis(start + hours * HOUR_MS))
        .send()
        .await
        .map_err(|e| failure::<(), _>(Err(e)))
}

async fn desired(w: &World, u: &User) -> i32 {
    group(w, u, "web")
        .await
        .expect("the group")
        .desired_capacity()
        .expect("a desired capacity")
}

#[tokio::test]
async fn a_forecast_of_load_and_capacity_from_two_weeks_of_prometheus_history() {
    let Given { w, u, c } = Given::group("ps-forecast", 1, 5, 1).await;
    w.metric_source().await;
    let busy = hour_of(w.clock.now_ms()) + 3 * HOUR_MS;
    put(
        &w,
        &u,
        "requests",
        requests(PredictiveScalingMode::ForecastOnly).build(),
    )
    .await
    .expect("a predictive policy is taken");
    let shown = c
        .describe_policies()
        .auto_scaling_group_name("web")
        .send()
        .await
        .unwrap();
    let p = &shown.scaling_policies()[0];
    assert_eq!(p.policy_type(), Some("PredictiveScaling"));
    let cfg = p
        .predictive_scaling_configuration()
        .expect("its configuration");
    assert_eq!(cfg.mode(), Some(&PredictiveScalingMode::ForecastOnly));
    assert_eq!(
        cfg.max_capacity_breach_behavior(),
        Some(&PredictiveScalingMaxCapacityBreachBehavior::HonorMaxCapacity)
    );
    assert_eq!(cfg.scheduling_buffer_time(), None, "shown as given");

    // Less than a day of data: no forecast yet, as on AWS.
    let early = forecast(&w, &u, "requests", 48).await.unwrap();
    assert!(early.capacity_forecast().unwrap().values().is_empty());
    assert!(early.load_forecast()[0].values().is_empty());

    history(&w, LOAD, busy_at(busy));
    let f = forecast(&w, &u, "requests", 48).await.unwrap();
    let load = &f.load_forecast()[0];
    assert_eq!(load.values().len(), 48, "48 hours from the current one");
    assert_eq!(
        load.timestamps()[3].to_millis().unwrap(),
        busy,
        "hourly, from the current hour"
    );
    let at = |h: usize| load.values()[h];
    assert_eq!((at(0), at(3), at(4), at(27)), (100.0, 300.0, 100.0, 300.0));
    assert_eq!(
        load.metric_specification().unwrap().target_value(),
        Some(50.0),
        "the policy's metric"
    );
    // 50 requests a second a VM: 2 VMs, and 6 at the busy hour, which MaxSize 5 bounds.
    let capacity = f.capacity_forecast().unwrap().values();
    assert_eq!((capacity[0], capacity[3]), (2.0, 5.0));
    assert!(f.update_time().is_some());

    // Asked of a policy without forecasts, or of none.
    c.put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("up")
        .adjustment_type("ChangeInCapacity")
        .scaling_adjustment(1)
        .send()
        .await
        .unwrap();
    let (code, msg) = forecast(&w, &u, "up", 48).await.unwrap_err();
    assert_eq!(code, "ValidationError");
    assert!(
        msg.contains("only PredictiveScaling policies have forecasts"),
        "{msg}"
    );
    let (code, msg) = forecast(&w, &u, "nope", 48).await.unwrap_err();
    assert_eq!(code, "ValidationError");
    assert_eq!(msg, "Policy nope not found for AutoScalingGroup web");
    let (_, msg) = forecast(&w, &u, "requests", 31 * 24).await.unwrap_err();
    assert!(msg.contains("30 days"), "{msg}");
}

#[tokio::test]
async fn a_predefined_pair_forecasts_the_total_over_every_vm_the_group_had() {
    let (Given { w, u, c }, first) = Given::converged("ps-pair", 1, 10, 1).await;
    // The group's VM replaced: the history is read over both.
    c.terminate_instance_in_auto_scaling_group()
        .instance_id(&first[0])
        .should_decrement_desired_capacity(false)
        .send()
        .await
        .unwrap();
    w.run_for(5).await;
    let now = super::provisioning::converges(&w, &u, "hotel", "web", 1).await;
    assert_ne!(now, first);
    let g = w.store.group(&u.name, "web").await.unwrap().unwrap();
    let had = phantom_seams::store::members::since(w.store.as_ref(), &u.name, &g, 0)
        .await
        .unwrap();
    let mut both = vec![first[0].clone(), now[0].clone()];
    both.sort();
    assert_eq!(had, both);
    w.metric_source().await;
    // The memory Prometheus answers any query naming the CPU series: a total of 120 % CPU.
    history(&w, CPU, |_| 120.0);
    let cfg = PredictiveScalingConfiguration::builder()
        .metric_specifications(phantom_e2e::steps::cpu_forecast(40.0))
        .build();
    put(&w, &u, "cpu", cfg).await.unwrap();
    let f = forecast(&w, &u, "cpu", 2).await.unwrap();
    assert_eq!(f.load_forecast()[0].values(), &[120.0, 120.0]);
    assert_eq!(f.capacity_forecast().unwrap().values(), &[3.0, 3.0]);
}

#[tokio::test]
async fn forecast_and_scale_raises_the_minimum_its_buffer_before_the_hour() {
    let Given { w, u, c } = Given::group("ps-scale", 1, 10, 1).await;
    w.metric_source().await;
    // Half past an hour: the next hour is the busy one.
    let now = w.clock.now_ms();
    w.clock
        .advance_ms(hour_of(now) + HOUR_MS + HOUR_MS / 2 - now);
    let next = hour_of(w.clock.now_ms()) + HOUR_MS;
    history(&w, LOAD, busy_at(next));
    let cfg = requests(PredictiveScalingMode::ForecastAndScale)
        .scheduling_buffer_time(600)
        .build();
    put(&w, &u, "requests", cfg).await.unwrap();

    // The current hour at once: 2 VMs.
    w.health().run().await.unwrap();
    w.settle().await;
    assert_eq!(desired(&w, &u).await, 2);
    // Not yet the next hour's: its buffer has not come.
    w.clock
        .advance_ms(next - 600_000 - 1_000 - w.clock.now_ms());
    let run = w.health().run().await.unwrap();
    assert_eq!(run.forecasting.groups, 0, "nothing due");
    assert_eq!(desired(&w, &u).await, 2);
    // Ten minutes before it: 6.
    w.clock.advance_ms(1_000);
    let run = w.health().run().await.unwrap();
    assert_eq!((run.forecasting.groups, run.forecasting.raised), (1, 1));
    assert_eq!(desired(&w, &u).await, 6);
    let cause = &causes(&w, &u, "web").await[0];
    assert!(
        cause.contains("predictive scaling policy requests set the minimum capacity for the hour")
            && cause.contains("changing the desired capacity from 2 to 6"),
        "{cause}"
    );
    let g = group(&w, &u, "web").await.unwrap();
    assert_eq!(
        (g.min_size(), g.max_size()),
        (Some(1), Some(10)),
        "the user's sizes as set"
    );

    // During the hour, another policy cannot take the group below the forecast.
    c.put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("down")
        .adjustment_type("ChangeInCapacity")
        .scaling_adjustment(-5)
        .send()
        .await
        .unwrap();
    let down = || {
        c.execute_policy()
            .auto_scaling_group_name("web")
            .policy_name("down")
            .send()
    };
    down().await.unwrap();
    assert_eq!(desired(&w, &u).await, 6);
    // Once the hour is over (and the next, quiet, one in place), it can.
    w.clock.advance_ms(next + HOUR_MS - w.clock.now_ms());
    w.health().run().await.unwrap();
    assert_eq!(
        desired(&w, &u).await,
        6,
        "a forecast never lowers the capacity"
    );
    down().await.unwrap();
    assert_eq!(desired(&w, &u).await, 2, "down to the new hour's forecast");
}

#[tokio::test]
async fn a_forecast_above_max_size_is_honoured_or_raises_it_with_its_buffer() {
    for (breach, buffer, max, want) in [
        (
            PredictiveScalingMaxCapacityBreachBehavior::HonorMaxCapacity,
            None,
            4,
            4,
        ),
        (
            PredictiveScalingMaxCapacityBreachBehavior::IncreaseMaxCapacity,
            Some(10),
            7,
            6,
        ),
    ] {
        let Given { w, u, .. } = Given::group("ps-max", 1, 4, 1).await;
        w.metric_source().await;
        half_past(&w);
        let busy = hour_of(w.clock.now_ms());
        history(&w, LOAD, busy_at(busy));
        let cfg = requests(PredictiveScalingMode::ForecastAndScale)
            .max_capacity_breach_behavior(breach.clone())
            .set_max_capacity_buffer(buffer)
            .build();
        put(&w, &u, "requests", cfg).await.unwrap();
        w.health().run().await.unwrap();
        let g = group(&w, &u, "web").await.unwrap();
        assert_eq!(
            (g.max_size(), g.desired_capacity()),
            (Some(max), Some(want)),
            "{breach:?}"
        );
    }
}

#[tokio::test]
async fn what_aws_refuses_in_a_predictive_policy_is_refused() {
    let Given { w, u, c } = Given::group("ps-bad", 1, 4, 1).await;
    w.metric_source().await;
    let honor_with_buffer = requests(PredictiveScalingMode::ForecastOnly)
        .max_capacity_buffer(10)
        .build();
    let (code, msg) = put(&w, &u, "p", honor_with_buffer).await.unwrap_err();
    assert_eq!(code, "ValidationError");
    assert!(msg.contains("MaxCapacityBuffer can only be given"), "{msg}");
    w.prometheus
        .refuse("app_requestz", "1:5: parse error: unexpected identifier");
    let typo = requests_on("sum(app_requestz)", PredictiveScalingMode::ForecastOnly).build();
    let (code, msg) = put(&w, &u, "p", typo).await.unwrap_err();
    assert_eq!(code, "ValidationError");
    assert!(
        msg.contains("parse error: unexpected identifier"),
        "Prometheus's words: {msg}"
    );
    let spec = PredictiveScalingMetricSpecification::builder()
        .target_value(50.0)
        .predefined_metric_pair_specification(
            PredictiveScalingPredefinedMetricPair::builder()
                .predefined_metric_type(PredefinedMetricPairType::AlbRequestCount)
                .resource_label("app/lb/1/targetgroup/tg/2")
                .build(),
        )
        .build();
    let alb = PredictiveScalingConfiguration::builder()
        .metric_specifications(spec)
        .build();
    let (_, msg) = put(&w, &u, "p", alb).await.unwrap_err();
    assert!(msg.contains("which Phantom does not read"), "{msg}");
    let with_step = c
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("p")
        .policy_type("PredictiveScaling")
        .estimated_instance_warmup(60)
        .predictive_scaling_configuration(requests(PredictiveScalingMode::ForecastOnly).build())
        .send()
        .await;
    assert_eq!(
        failure(with_step).1,
        "EstimatedInstanceWarmup is not supported for policy type PredictiveScaling."
    );
    let exec = c
        .put_scaling_policy()
        .auto_scaling_group_name("web")
        .policy_name("p")
        .policy_type("PredictiveScaling")
        .predictive_scaling_configuration(requests(PredictiveScalingMode::ForecastOnly).build())
        .send()
        .await;
    assert!(exec.is_ok());
    let run = c
        .execute_policy()
        .auto_scaling_group_name("web")
        .policy_name("p")
        .send()
        .await;
    assert!(failure(run).1.contains("is a PredictiveScaling policy"));
}

/// Terraform's aws_autoscaling_policy with a predictive_scaling_configuration block, its calls in
/// the provider's order (internal/service/autoscaling/policy.go): PutScalingPolicy with Enabled,
/// Mode and MaxCapacityBreachBehavior always (their schema defaults), a query's ReturnData always
/// and its Label where set; the read, DescribePolicies by group and name, must find exactly one
/// and give back what was sent (or the next plan differs); an update puts it again; destroy is
/// DeletePolicy, a second one's "not found" taken as gone.
#[tokio::test]
async fn terraforms_predictive_policy_calls_in_its_order_read_back_as_sent() {
    let Given { w, c, .. } = Given::group("ps-terraform", 1, 4, 1).await;
    w.metric_source().await;
    let queries = |id: &str, e: &str| {
        vec![MetricDataQuery::builder()
            .id(id)
            .expression(e)
            .label(id)
            .return_data(true)
            .build()]
    };
    let cfg = |breach: PredictiveScalingMaxCapacityBreachBehavior, buffer: Option<i32>| {
        let spec = PredictiveScalingMetricSpecification::builder()
            .target_value(50.0)
            .customized_load_metric_specification(
                PredictiveScalingCustomizedLoadMetric::builder()
                    .set_metric_data_queries(Some(queries("load", "sum(app_requests)")))
                    .build(),
            )
            .customized_scaling_metric_specification(
                PredictiveScalingCustomizedScalingMetric::builder()
                    .set_metric_data_queries(Some(queries(
                        "scaling",
                        "avg(app_requests{$instances})",
                    )))
                    .build(),
            )
            .build();
        PredictiveScalingConfiguration::builder()
            .metric_specifications(spec)
            .max_capacity_breach_behavior(breach)
            .mode(PredictiveScalingMode::ForecastAndScale)
            .scheduling_buffer_time(10)
            .set_max_capacity_buffer(buffer)
            .build()
    };
    let put = async |cfg: PredictiveScalingConfiguration| {
        c.put_scaling_policy()
            .auto_scaling_group_name("web")
            .enabled(true)
            .policy_name("tf-predictive")
            .policy_type("PredictiveScaling")
            .predictive_scaling_configuration(cfg)
            .send()
            .await
            .expect("PutScalingPolicy as Terraform sends it")
    };
    let read = async || {
        c.describe_policies()
            .auto_scaling_group_name("web")
            .policy_names("tf-predictive")
            .send()
            .await
            .expect("the read")
            .scaling_policies()
            .to_vec()
    };
    let sent = cfg(
        PredictiveScalingMaxCapacityBreachBehavior::HonorMaxCapacity,
        None,
    );
    let created = put(sent.clone()).await;
    let found = read().await;
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].policy_arn(), created.policy_arn());
    assert_eq!(found[0].enabled(), Some(true));
    assert_eq!(
        found[0].predictive_scaling_configuration(),
        Some(&sent),
        "read back as sent"
    );

    let sent = cfg(
        PredictiveScalingMaxCapacityBreachBehavior::IncreaseMaxCapacity,
        Some(10),
    );
    let updated = put(sent.clone()).await;
    assert_eq!(updated.policy_arn(), created.policy_arn());
    assert_eq!(
        read().await[0].predictive_scaling_configuration(),
        Some(&sent)
    );

    let delete = async || {
        c.delete_policy()
            .auto_scaling_group_name("web")
            .policy_name("tf-predictive")
            .send()
            .await
    };
    delete().await.expect("destroy");
    let (code, msg) = failure(delete().await);
    assert_eq!(code, "ValidationError");
    assert!(msg.contains("not found"), "{msg}");
    assert!(read().await.is_empty());
}
