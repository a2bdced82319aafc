//! What every user does for themselves: their credentials on each cloud, the images and key pairs
//! that cloud offers them, and an SSH key imported into the clouds they use.

use super::{required, Failure, Outcome};
use crate::App;
use phantom::cloud::Catalog;
use phantom::identity::Caller;
use phantom::store::{CloudCredentials, StoreError};
use phantom::ApiError;
use serde_json::{json, Value};
use std::sync::Arc;

/// Runs `operation` if it is one of these; `None` if it is not.
pub async fn run(app: &App, caller: &Caller, operation: &str, input: &Value) -> Option<Outcome> {
    Some(match operation {
        "GetCallerIdentity" => caller_identity(app, caller).await,
        "ListClouds" => list_clouds(app, caller).await,
        "PutCloudCredentials" => put_credentials(app, caller, input).await,
        "DeleteCloudCredentials" => delete_credentials(app, caller, input).await,
        "DescribeCloudImages" => images(app, caller, input).await,
        "DescribeCloudKeyPairs" => key_pairs(app, caller, input).await,
        "ImportKeyPair" => import_key_pair(app, caller, input).await,
        _ => return None,
    })
}

async fn caller_identity(app: &App, caller: &Caller) -> Outcome {
    let user = app
        .store
        .user(&caller.user)
        .await?
        .ok_or_else(|| ApiError::internal("The caller's user record is missing."))?;
    Ok(json!({
        "UserName": user.name,
        "Account": user.account_id,
        "AccessKeyId": user.access_key_id,
        "Admin": user.admin,
    }))
}

/// Every registered cloud, with whether the caller has credentials there (and which access key
/// id; never the secret).
async fn list_clouds(app: &App, caller: &Caller) -> Outcome {
    let clouds = app.store.clouds().await?;
    let mine = app.store.all_cloud_credentials(&caller.user).await?;
    let list: Vec<Value> = clouds
        .iter()
        .map(|c| {
            let creds = mine.iter().find(|m| m.cloud == c.name);
            let mut v = json!({
                "Name": c.name,
                "Region": c.region,
                "Zone": c.zone,
                "LaunchTemplates": c.launch_templates,
                "HasCredentials": creds.is_some(),
            });
            if let Some(creds) = creds {
                v["AccessKeyId"] = creds.access_key_id.clone().into();
            }
            v
        })
        .collect();
    Ok(json!({ "Clouds": list }))
}

async fn put_credentials(app: &App, caller: &Caller, input: &Value) -> Outcome {
    let cloud = required(input, "Cloud")?;
    let creds = CloudCredentials {
        cloud: cloud.to_string(),
        access_key_id: required(input, "AccessKeyId")?.to_string(),
        secret: required(input, "SecretAccessKey")?.to_string(),
    };
    match app.store.put_cloud_credentials(&caller.user, &creds).await {
        Ok(()) => Ok(json!({})),
        Err(StoreError::NotFound) => Err(not_registered(cloud).into()),
        Err(e) => Err(e.into()),
    }
}

async fn delete_credentials(app: &App, caller: &Caller, input: &Value) -> Outcome {
    let cloud = required(input, "Cloud")?;
    match app
        .store
        .delete_cloud_credentials(&caller.user, cloud)
        .await
    {
        Ok(()) => Ok(json!({})),
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

async fn images(app: &App, caller: &Caller, input: &Value) -> Outcome {
    let cloud = required(input, "Cloud")?;
    let images = catalog(app, caller, cloud)
        .await?
        .images()
        .await
        .map_err(|e| Failure::from_cloud(cloud, e))?;
    let list: Vec<Value> = images
        .into_iter()
        .map(|i| {
            json!({
                "ImageId": i.id,
                "Name": i.name,
                "Description": i.description,
                "Architecture": i.architecture,
            })
        })
        .collect();
    Ok(json!({ "Images": list }))
}

async fn key_pairs(app: &App, caller: &Caller, input: &Value) -> Outcome {
    let cloud = required(input, "Cloud")?;
    let pairs = catalog(app, caller, cloud)
        .await?
        .key_pairs()
        .await
        .map_err(|e| Failure::from_cloud(cloud, e))?;
    let list: Vec<Value> = pairs
        .into_iter()
        .map(|k| json!({"KeyName": k.name, "KeyFingerprint": k.fingerprint}))
        .collect();
    Ok(json!({ "KeyPairs": list }))
}

/// EC2's limits on a key pair's name, and a bound on a public key (an RSA 16384-bit key's
/// OpenSSH line is under 3 KB).
const KEY_NAME_MAX: usize = 255;
const PUBLIC_KEY_MAX: usize = 16 * 1024;

/// Imports the key into each listed cloud, by default every cloud the caller has credentials
/// for, all at once; one cloud's refusal is its result, not the call's.
async fn import_key_pair(app: &App, caller: &Caller, input: &Value) -> Outcome {
    let name = required(input, "KeyName")?;
    if name.len() > KEY_NAME_MAX || !name.is_ascii() {
        return Err(ApiError::validation(format!(
            "KeyName must be up to {KEY_NAME_MAX} ASCII characters."
        ))
        .into());
    }
    let material = required(input, "PublicKeyMaterial")?;
    if material.len() > PUBLIC_KEY_MAX {
        return Err(ApiError::validation(format!(
            "PublicKeyMaterial must be at most {PUBLIC_KEY_MAX} bytes (an OpenSSH public key line)."
        ))
        .into());
    }
    phantom::cloud::check_public_key(material).map_err(ApiError::validation)?;
    let clouds: Vec<String> = match input.get("Clouds") {
        None | Some(Value::Null) => app
            .store
            .all_cloud_credentials(&caller.user)
            .await?
            .into_iter()
            .map(|c| c.cloud)
            .collect(),
        Some(Value::Array(list)) if !list.is_empty() => list
            .iter()
            .map(|c| match c {
                Value::String(s) if !s.is_empty() => Ok(s.clone()),
                _ => Err(ApiError::validation("Clouds must be names of clouds.")),
            })
            .collect::<Result<_, _>>()?,
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
            Ok(fingerprint) => {
                json!({"Cloud": cloud, "KeyName": name, "KeyFingerprint": fingerprint})
            }
            Err(e) => json!({"Cloud": cloud, "Error": e.to_json()}),
        }
    }))
    .await;
    Ok(json!({ "Results": results }))
}
