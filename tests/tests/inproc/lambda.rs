//! The deployed shape, in process: the SDK configured with the stage's URL, each request turned
//! into API Gateway's proxy event, read by lambda_http and answered by the api function's Lambda
//! adapter (`api::lambda::handle`), as on AWS.

use crate::failure;
use crate::Given;
use api::lambda::lambda_http;
use phantom_e2e::api_gateway;
use phantom_e2e::steps::Steps;
use phantom_e2e::world::World;

#[tokio::test]
async fn the_sdk_through_api_gateway_and_the_lambda_adapter() {
    let Given { w, u, .. } = Given::user("gw").await;
    let c = w.sdk_through_gateway(&u, &api_gateway::url("Prod"), "Prod");
    c.create_lc("web@hotel").await;
    c.create_group("g", "web@hotel", (1, 3, 2)).await;
    w.settle().await;
    let groups = c
        .describe_auto_scaling_groups()
        .auto_scaling_group_names("g")
        .send()
        .await
        .expect("describe-auto-scaling-groups through the gateway");
    let g = &groups.auto_scaling_groups()[0];
    assert_eq!(g.instances().len(), 2, "{g:?}");
    assert_eq!(w.hotel.alive().len(), 2);
    // A user's mistake keeps AWS's code and message through the adapter.
    assert_eq!(
        failure(
            c.set_desired_capacity()
                .auto_scaling_group_name("g")
                .desired_capacity(9)
                .send()
                .await
        ),
        (
            "ValidationError".into(),
            "New SetDesiredCapacity value 9 is above max value 3 for the AutoScalingGroup.".into()
        )
    );
    // The same group as the direct client sees it: one service, two doors.
    let direct = w
        .sdk(&u)
        .describe_auto_scaling_groups()
        .send()
        .await
        .unwrap();
    assert_eq!(direct.auto_scaling_groups().len(), 1);
}

#[tokio::test]
async fn the_signature_covers_the_stage_and_the_secret() {
    let Given { w, u, .. } = Given::user("gws").await;
    // Signed for /Prod/, delivered on another stage (a replay): the path differs.
    let replayed = w.sdk_through_gateway(&u, &api_gateway::url("Prod"), "Beta");
    let (code, _) = failure(replayed.describe_auto_scaling_groups().send().await);
    assert_eq!(code, "SignatureDoesNotMatch");
    let mut wrong = u.clone();
    wrong.secret.push('x');
    let (code, _) = failure(
        w.sdk_through_gateway(&wrong, &api_gateway::url("Prod"), "Prod")
            .describe_auto_scaling_groups()
            .send()
            .await,
    );
    assert_eq!(code, "SignatureDoesNotMatch");
}

#[tokio::test]
async fn a_custom_domain_signs_without_the_stage() {
    let Given { w, u, .. } = Given::user("gwd").await;
    // A domain mapped at its root to the stage: the client's path has no stage in it, and
    // lambda_http's URI (which puts one in front) would not match the signature.
    let c = w.sdk_through_gateway(&u, "https://autoscaling.example.com/", "Prod");
    let groups = c
        .describe_auto_scaling_groups()
        .send()
        .await
        .expect("describe-auto-scaling-groups on the custom domain");
    assert!(groups.auto_scaling_groups().is_empty());
}

#[tokio::test]
async fn the_console_below_the_stage() {
    let w = World::new().await;
    let get = |path: &str| {
        let uri: http::Uri = format!(
            "https://{}.execute-api.us-east-1.amazonaws.com{path}",
            api_gateway::API_ID
        )
        .parse()
        .unwrap();
        let host = uri.authority().unwrap().to_string();
        let event = api_gateway::event("Prod", "GET", &uri, &[("Host".into(), host)], b"");
        lambda_http::request::from_str(&event.to_string()).expect("lambda_http reads the event")
    };
    let page = api::lambda::handle(&w.app, get("/Prod/console/"))
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(page.headers().contains_key("content-security-policy"));
    let lambda_http::Body::Text(html) = page.body() else {
        panic!("the page is text: {:?}", page.body());
    };
    assert!(html.contains("<script"), "{html}");
    let moved = api::lambda::handle(&w.app, get("/Prod/console"))
        .await
        .unwrap();
    assert_eq!(moved.status(), 301);
    assert_eq!(moved.headers()["location"], "console/");
}
