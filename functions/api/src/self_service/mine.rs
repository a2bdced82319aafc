//! What every user does for themselves: their credentials on each cloud, the images and key pairs
//! that cloud offers them, and an SSH key imported into the clouds they use.

use super::shapes::{self, ImportKeyPair, Name, OfCloud, OfGroup, PutCloudCredentials};
use super::{answer, read, Failure, Json, Outcome};
use crate::App;
use phantom_rules::identity::Caller;
use phantom_seams::cloud::Catalog;
use phantom_seams::store::{CloudCredentials, StoreError};
use phantom_wire::ApiError;
use std::sync::Arc;

/// Runs `operation` if it is one of these; `None` if it is not.
pub async fn run(app: &App, caller: &Caller, operation: &str, input: &Json) -> Option<Outcome> {
    Some(match operation {
        "GetCallerIdentity" => answer(caller_identity(app, caller).await),
        "ListClouds" => answer(list_clouds(app, caller).await),
        "PutCloudCredentials" => {
            answer(async { put_credentials(app, caller, read(input)?).await }.await)
        }
        "DeleteCloudCredentials" => {
            answer(async { delete_credentials(app, caller, read(input)?).await }.await)
        }
        "DescribeCloudImages" => answer(async { images(app, caller, read(input)?).await }.await),
        "DescribeCloudKeyPairs" => {
            answer(async { key_pairs(app, caller, read(input)?).await }.await)
        }
        "ImportKeyPair" => answer(async { import_key_pair(app, caller, read(input)?).await }.await),
        "DescribeInstanceMarkets" => {
            answer(async { markets(app, caller, read(input)?).await }.await)
        }
        "DescribeInstanceHealth" => answer(async { health(app, caller, read(input)?).await }.await),
        "CreateScrapeCredential" => answer(create_scrape(app, caller).await),
        "DeleteScrapeCredential" => answer(delete_scrape(app, caller).await),
        _ => return None,
    })
}

/// Each VM of one of the caller's groups, spot or on-demand (the console's instances table).
async fn markets(
    app: &App,
    caller: &Caller,
    input: OfGroup,
) -> Result<shapes::InstanceMarkets, Failure> {
    let name = input.auto_scaling_group_name.to_string();
    if app.store.group(&caller.user, &name).await?.is_none() {
        return Err(ApiError::validation(format!("Group {name} does not exist.")).into());
    }
    let instances = app
        .store
        .instances(&caller.user, &name)
        .await?
        .into_iter()
        .map(|m| shapes::InstanceMarket {
            instance_id: m.id,
            market: m.market.as_str(),
        })
        .collect();
    Ok(shapes::InstanceMarkets { instances })
}

/// Each VM of one of the caller's groups, healthy or not and why (the console's instances table):
/// what its record says (SetInstanceHealth, a failed probe or heartbeat) and what EC2's status
/// checks and scheduled events say now, as the group's round judges them.
async fn health(
    app: &App,
    caller: &Caller,
    input: OfGroup,
) -> Result<shapes::InstanceHealths, Failure> {
    use phantom_rules::health::{self, Failed};
    let name = input.auto_scaling_group_name.to_string();
    let Some(g) = app.store.group(&caller.user, &name).await? else {
        return Err(ApiError::validation(format!("Group {name} does not exist.")).into());
    };
    let members = app.store.instances(&caller.user, &name).await?;
    let mut statuses = Vec::new();
    let mut unasked = Vec::new();
    let clouds: std::collections::BTreeSet<&str> =
        members.iter().map(|m| m.cloud.as_str()).collect();
    for cloud in clouds {
        let checks = app
            .store
            .cloud(cloud)
            .await?
            .is_some_and(|c| c.status_checks);
        let Some(lookup) = crate::actions::lookups::cloud(app, caller, cloud).await? else {
            unasked.push(format!("{cloud}: no credentials there"));
            continue;
        };
        let ids: Vec<String> = members
            .iter()
            .filter(|m| m.cloud == cloud)
            .map(|m| m.id.clone())
            .collect();
        if !checks {
            continue;
        }
        match lookup.statuses(&ids).await {
            Ok(found) => statuses.extend(found),
            Err(e) => unasked.push(format!("{cloud}: {e}")),
        }
    }
    let settings = health::Settings {
        ebs: phantom_rules::health::Checks::of(&g).ebs,
        grace_ms: g.settings.health_check_grace_period * 1000,
        confirm_ms: health::confirm_ms(&g).map_err(|e| ApiError::validation(e.message()))?,
    };
    let judged = health::judge(settings, &members, &statuses, app.clock.now_ms());
    let instances = members
        .into_iter()
        .map(|m| {
            let said = |check: Failed, why: &str| format!("{} ({why})", check.in_response_to());
            let why = match judged.failing.get(&m.id) {
                Some((check, why)) => Some(said(*check, why)),
                None if !m.healthy => {
                    let (check, why) = health::marked(&m);
                    Some(said(check, &why))
                }
                None => None,
            };
            shapes::InstanceHealth {
                health_status: if why.is_some() {
                    "Unhealthy"
                } else {
                    "Healthy"
                },
                instance_id: m.id,
                why,
            }
        })
        .collect();
    Ok(shapes::InstanceHealths { instances, unasked })
}

async fn caller_identity(app: &App, caller: &Caller) -> Result<shapes::CallerIdentity, Failure> {
    let user = app
        .store
        .user(&caller.user)
        .await?
        .ok_or_else(|| ApiError::internal("The caller's user record is missing."))?;
    // An IAM user (or a session) is named as STS names it, the key being the one it signed with.
    let user_name = match &caller.identity {
        Some(i) => phantom_rules::iam::principal::arn(&caller.account_id, Some(i)),
        None => user.name,
    };
    Ok(shapes::CallerIdentity {
        user_name,
        account: user.account_id,
        access_key_id: caller.access_key_id.clone().unwrap_or(user.access_key_id),
        admin: user.admin,
    })
}

/// Every registered cloud, with whether the caller has credentials there (and which access key
/// id; never the secret).
async fn list_clouds(
    app: &App,
    caller: &Caller,
) -> Result<shapes::Clouds<shapes::CloudOfMine>, Failure> {
    let clouds = app.store.clouds().await?;
    let mine = app.store.all_cloud_credentials(&caller.user).await?;
    let clouds = clouds
        .into_iter()
        .map(|c| {
            let creds = mine.iter().find(|m| m.cloud == c.name);
            shapes::CloudOfMine {
                has_credentials: creds.is_some(),
                access_key_id: creds.map(|k| k.access_key_id.clone()),
                name: c.name,
                region: c.region,
                zone: c.zone,
                launch_templates: c.launch_templates,
                load_balancers: c.load_balancers,
            }
        })
        .collect();
    Ok(shapes::Clouds { clouds })
}

async fn put_credentials(
    app: &App,
    caller: &Caller,
    input: PutCloudCredentials,
) -> Result<shapes::Done, Failure> {
    let cloud = &input.cloud;
    let creds = CloudCredentials {
        cloud: cloud.to_string(),
        access_key_id: input.access_key_id.to_string(),
        secret: input.secret_access_key.to_string(),
    };
    match app.store.put_cloud_credentials(&caller.user, &creds).await {
        Ok(()) => Ok(shapes::Done {}),
        Err(StoreError::NotFound) => Err(not_registered(cloud).into()),
        Err(e) => Err(e.into()),
    }
}

async fn delete_credentials(
    app: &App,
    caller: &Caller,
    input: OfCloud,
) -> Result<shapes::Done, Failure> {
    let cloud = &input.cloud;
    match app
        .store
        .delete_cloud_credentials(&caller.user, cloud)
        .await
    {
        Ok(()) => Ok(shapes::Done {}),
        Err(StoreError::NotFound) => Err(ApiError::validation(format!(
            "You have no credentials for cloud '{cloud}'."
        ))
        .into()),
        Err(e) => Err(e.into()),
    }
}

fn not_registered(cloud: &str) -> ApiError {
    ApiError::validation(format!(
        "Cloud '{cloud}' is not registered (ListClouds lists those that are)."
    ))
}

/// The cloud as the caller reaches it, with their credentials there.
async fn catalog(app: &App, caller: &Caller, cloud: &str) -> Result<Arc<dyn Catalog>, Failure> {
    let record = app
        .store
        .cloud(cloud)
        .await?
        .ok_or_else(|| not_registered(cloud))?;
    let creds = app
        .store
        .cloud_credentials(&caller.user, cloud)
        .await?
        .ok_or_else(|| {
            ApiError::validation(format!(
                "You have no credentials for cloud '{cloud}' (PutCloudCredentials sets them)."
            ))
        })?;
    Ok(app.clouds.catalog(&record, &creds))
}

async fn images(app: &App, caller: &Caller, input: OfCloud) -> Result<shapes::Images, Failure> {
    let cloud = &input.cloud;
    let images = catalog(app, caller, cloud)
        .await?
        .images()
        .await
        .map_err(|e| Failure::from_cloud(cloud, e))?;
    Ok(shapes::Images {
        images: images
            .into_iter()
            .map(|i| shapes::Image {
                image_id: i.id,
                name: i.name,
                description: i.description,
                architecture: i.architecture,
            })
            .collect(),
    })
}

async fn key_pairs(
    app: &App,
    caller: &Caller,
    input: OfCloud,
) -> Result<shapes::KeyPairs, Failure> {
    let cloud = &input.cloud;
    let pairs = catalog(app, caller, cloud)
        .await?
        .key_pairs()
        .await
        .map_err(|e| Failure::from_cloud(cloud, e))?;
    Ok(shapes::KeyPairs {
        key_pairs: pairs
            .into_iter()
            .map(|k| shapes::KeyPair {
                key_name: k.name,
                key_fingerprint: k.fingerprint,
            })
            .collect(),
    })
}

/// EC2's limits on a key pair's name, and a bound on a public key (an RSA 16384-bit key's
/// OpenSSH line is under 3 KB).
const KEY_NAME_MAX: usize = 255;
const PUBLIC_KEY_MAX: usize = 16 * 1024;

/// Imports the key into each listed cloud, by default every cloud the caller has credentials
/// for, all at once; one cloud's refusal is its result, not the call's.
async fn import_key_pair(
    app: &App,
    caller: &Caller,
    input: ImportKeyPair,
) -> Result<shapes::Results, Failure> {
    let name: &str = &input.key_name;
    if name.len() > KEY_NAME_MAX || !name.is_ascii() {
        return Err(ApiError::validation(format!(
            "KeyName must be up to {KEY_NAME_MAX} ASCII characters."
        ))
        .into());
    }
    let material: &str = &input.public_key_material;
    if material.len() > PUBLIC_KEY_MAX {
        return Err(ApiError::validation(format!(
            "PublicKeyMaterial must be at most {PUBLIC_KEY_MAX} bytes (an OpenSSH public key line)."
        ))
        .into());
    }
    phantom_seams::cloud::check_public_key(material).map_err(ApiError::validation)?;
    let clouds: Vec<String> = match input.clouds {
        None => app
            .store
            .all_cloud_credentials(&caller.user)
            .await?
            .into_iter()
            .map(|c| c.cloud)
            .collect(),
        Some(list) if !list.is_empty() => list.iter().map(|c: &Name| c.to_string()).collect(),
        Some(_) => {
            return Err(
                ApiError::validation("Clouds must be a non-empty list of cloud names.").into(),
            )
        }
    };
    if clouds.is_empty() {
        return Err(ApiError::validation(
            "You have credentials on no cloud: set some with PutCloudCredentials first.",
        )
        .into());
    }
    let results = futures::future::join_all(clouds.iter().map(|cloud| async move {
        let outcome = match catalog(app, caller, cloud).await {
            Ok(c) => c
                .import_key_pair(name, material)
                .await
                .map_err(|e| Failure::from_cloud(cloud, e)),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(fingerprint) => shapes::Imported {
                cloud: cloud.clone(),
                key_name: Some(name.to_string()),
                key_fingerprint: Some(fingerprint),
                error: None,
            },
            Err(e) => shapes::Imported {
                cloud: cloud.clone(),
                key_name: None,
                key_fingerprint: None,
                error: Some(e.shape()),
            },
        }
    }))
    .await;
    Ok(shapes::Results { results })
}

/// A new password for the caller's Prometheus to scrape its group metrics with (shown once; a
/// second call replaces the first).
async fn create_scrape(app: &App, caller: &Caller) -> Result<shapes::NewScrapeCredential, Failure> {
    let (password, digest) = phantom_rules::scrape::new_password();
    app.store.set_scrape(&caller.user, Some(&digest)).await?;
    tracing::info!(user = caller.user, "scrape credential created");
    Ok(shapes::NewScrapeCredential {
        scrape_credential: shapes::ScrapeCredential {
            user_name: caller.user.clone(),
            password,
            path: phantom_rules::scrape::PATH,
        },
    })
}

/// No scrape of the caller's metrics is accepted any more.
async fn delete_scrape(app: &App, caller: &Caller) -> Result<shapes::Done, Failure> {
    app.store.set_scrape(&caller.user, None).await?;
    tracing::info!(user = caller.user, "scrape credential deleted");
    Ok(shapes::Done {})
}
