//! phantomctl: Phantom's admin tool. It talks to DynamoDB with the same configuration as the
//! functions (PHANTOM_STATE_TABLE, PHANTOM_SECRETS_KEY, AWS_REGION, AWS_ENDPOINT_URL, credentials from the environment), so it
//! works against the local stack and a deployed one alike.

use clap::{Parser, Subcommand};
use phantom_rules::identity::{self, User};
use phantom_seams::config::{aws_sdk_config, Config};
use phantom_seams::store::{
    CloudCredentials, CloudRecord, Directory, DynamoStore, MetricAuth, Store, StoreError,
};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "phantomctl",
    about = "Administer a Phantom deployment",
    version
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Users and their access keys.
    #[command(subcommand)]
    User(UserCommand),
    /// EC2-compatible clouds that launch configurations name with `@cloud`.
    #[command(subcommand)]
    Cloud(CloudCommand),
    /// A user's credentials for a cloud, used to launch that user's VMs there.
    #[command(subcommand)]
    Credentials(CredentialsCommand),
    /// The Prometheus server whose series target tracking policies follow.
    #[command(subcommand)]
    MetricSource(MetricSourceCommand),
}

#[derive(Subcommand)]
enum MetricSourceCommand {
    /// Sets the deployment's metric source, or replaces it.
    Set {
        /// Prometheus's base URL, e.g. http://prometheus:9090
        #[arg(long)]
        url: String,
        /// The label of its series that holds a VM's EC2 instance id (relabelled from Prometheus's
        /// EC2 service discovery's __meta_ec2_instance_id, say).
        #[arg(long)]
        instance_label: String,
        /// The environment variable that holds a bearer token (kept out of the command line).
        #[arg(long)]
        bearer_token_env: Option<String>,
        /// A basic auth user; its password comes from --basic-password-env.
        #[arg(long, requires = "basic_password_env")]
        basic_user: Option<String>,
        /// The environment variable that holds the basic auth password.
        #[arg(long, requires = "basic_user")]
        basic_password_env: Option<String>,
    },
    /// Prints the metric source: URL, instance label, auth (never its secret).
    Show,
    /// Removes the metric source: target tracking policies have no data until one is set.
    Delete,
}

#[derive(Subcommand)]
enum UserCommand {
    /// Creates a user and prints `ACCESS_KEY SECRET` on one line.
    Create {
        name: String,
        /// The user reaches the administrators' operations of Phantom's API (and the console's
        /// admin view): how the first administrator is made.
        #[arg(long)]
        admin: bool,
    },
    /// Lists users: name, account id, access key id, created, admin or user, enabled or disabled.
    List,
    /// Deletes the user's access key: requests signed with it are refused (within the api's key
    /// cache time, 30 s). The user's groups and VMs stay.
    Disable { name: String },
    /// Replaces the user's access key with a new one (enabling a disabled user) and prints
    /// `ACCESS_KEY SECRET`.
    Rotate { name: String },
    /// Sets the user's request limits (requests a second and a burst, for describing and for
    /// changing calls), or with `--default` gives it the deployment's again. The api sees them
    /// within its key cache time (30 s).
    Limits {
        name: String,
        #[arg(long, required_unless_present = "default")]
        describe_rate: Option<f64>,
        #[arg(long, required_unless_present = "default")]
        describe_burst: Option<f64>,
        #[arg(long, required_unless_present = "default")]
        mutate_rate: Option<f64>,
        #[arg(long, required_unless_present = "default")]
        mutate_burst: Option<f64>,
        #[arg(long, conflicts_with_all = ["describe_rate", "describe_burst", "mutate_rate", "mutate_burst"])]
        default: bool,
    },
    /// Lists the account's IAM users, each with its keys (id, Active or Inactive, last used)
    /// and policies: `USER KEY STATUS LAST_USED` lines, then its policies.
    Iam { name: String },
    /// Prints the account's audit trail, newest first: `TIME WHO ACTION OUTCOME RESOURCES`.
    Trail {
        name: String,
        /// How many events at most.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Makes a new password for a Prometheus to scrape the user's group metrics with
    /// (`<api>/phantom/v1/metrics`, HTTP Basic with the user's name), replacing any earlier one,
    /// and prints it; with `--delete`, no scrape is accepted any more.
    Scrape {
        name: String,
        #[arg(long)]
        delete: bool,
    },
}

#[derive(Subcommand)]
enum CloudCommand {
    /// Registers a cloud, or updates one.
    Add {
        name: String,
        /// The cloud's EC2 API endpoint, e.g. https://ec2.example.org:8443
        #[arg(long)]
        endpoint: String,
        /// The region to sign EC2 requests for.
        #[arg(long, default_value = "us-east-1")]
        region: String,
        /// The availability zone for groups that name none (default: REGION + "a").
        #[arg(long)]
        zone: Option<String>,
        /// The cloud's EC2 API has no launch templates: groups from a template are refused there.
        #[arg(long)]
        no_launch_templates: bool,
        /// The cloud has no ELB or ELBv2 API: load balancers are refused there.
        #[arg(long)]
        no_load_balancers: bool,
        /// The cloud's EC2 state-change events reach the deployment's event bus (an AWS region
        /// whose accounts forward them, docs/scale.md): its VMs are looked at every minute, not
        /// every 10 s.
        #[arg(long)]
        events: bool,
    },
    /// Lists clouds: name, endpoint, region, zone, whether it has launch templates and load
    /// balancers, and whether it sends its VMs' state changes.
    List,
}

#[derive(Subcommand)]
enum CredentialsCommand {
    /// Sets USER's access key for CLOUD.
    Set {
        user: String,
        cloud: String,
        #[arg(long)]
        access_key_id: String,
        #[arg(long)]
        secret_access_key: String,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = Config::from_env();
    let store = match DynamoStore::from_env(&aws_sdk_config().await, &config.table) {
        Ok(store) => store,
        Err(message) => {
            eprintln!("phantomctl: {message}");
            return ExitCode::FAILURE;
        }
    };
    match run(cli.command, &store).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("phantomctl: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command, store: &dyn Store) -> Result<(), String> {
    match command {
        Command::User(UserCommand::Create { name, admin }) => {
            let created = phantom_model::time::format_timestamp(phantom_model::time::now());
            let (user, secret) = phantom_rules::identity::new_user(&name, admin, created)?;
            match store.create_user(&user, &secret).await {
                Ok(()) => println!("{} {secret}", user.access_key_id),
                Err(StoreError::Exists) => return Err(format!("user '{name}' already exists")),
                Err(e) => return Err(e.to_string()),
            }
        }
        Command::User(UserCommand::List) => {
            for u in store.users().await.map_err(|e| e.to_string())? {
                let role = if u.admin { "admin" } else { "user" };
                let state = if u.disabled { "disabled" } else { "enabled" };
                println!(
                    "{}\t{}\t{}\t{}\t{role}\t{state}",
                    u.name, u.account_id, u.access_key_id, u.created
                );
            }
        }
        Command::User(UserCommand::Disable { name }) => {
            let user = existing_user(store, &name).await?;
            if user.disabled {
                return Err(format!("user '{name}' is disabled already"));
            }
            store.disable_user(&user).await.map_err(|e| e.to_string())?;
            // Its IAM users' keys stop with its root's (within the api's key cache, 30 s).
            store
                .rewrite_iam_keys(&user, Some(false))
                .await
                .map_err(|e| e.to_string())?;
        }
        Command::User(UserCommand::Limits {
            name,
            describe_rate,
            describe_burst,
            mutate_rate,
            mutate_burst,
            default,
        }) => {
            let user = existing_user(store, &name).await?;
            let limits = match (
                default,
                describe_rate,
                describe_burst,
                mutate_rate,
                mutate_burst,
            ) {
                (true, ..) => None,
                (false, Some(dr), Some(db), Some(mr), Some(mb)) => {
                    let rate = |per_sec, burst| phantom_rules::throttle::Rate { per_sec, burst };
                    let l = phantom_rules::throttle::Limits {
                        describe: rate(dr, db),
                        mutate: rate(mr, mb),
                    };
                    l.check()?;
                    Some(l)
                }
                _ => return Err("give all four limits, or --default".into()),
            };
            store
                .set_limits(&user, limits.as_ref())
                .await
                .map_err(|e| e.to_string())?;
            // The account's IAM users' keys carry its limits too.
            let user = existing_user(store, &name).await?;
            store
                .rewrite_iam_keys(&user, None)
                .await
                .map_err(|e| e.to_string())?;
        }
        Command::User(UserCommand::Scrape { name, delete }) => {
            let user = existing_user(store, &name).await?;
            if delete {
                store
                    .set_scrape(&user.name, None)
                    .await
                    .map_err(|e| e.to_string())?;
            } else {
                let (password, digest) = phantom_rules::scrape::new_password();
                store
                    .set_scrape(&user.name, Some(&digest))
                    .await
                    .map_err(|e| e.to_string())?;
                println!("{password}");
            }
        }
        Command::User(UserCommand::Iam { name }) => {
            existing_user(store, &name).await?;
            for u in store.iam_users(&name).await.map_err(|e| e.to_string())? {
                println!("{} {}", u.name, u.arn());
                for k in &u.keys {
                    let status = if k.active { "Active" } else { "Inactive" };
                    let used = store
                        .access_key(&k.access_key_id)
                        .await
                        .map_err(|e| e.to_string())?
                        .and_then(|key| key.last_used)
                        .map_or("never".to_string(), |u| format!("{} {}", u.at, u.service));
                    println!("  key {} {status} last used {used}", k.access_key_id);
                }
                for p in u.policies.keys() {
                    println!("  inline policy {p}");
                }
                for p in u.attached.keys() {
                    println!("  attached {p}");
                }
            }
        }
        Command::User(UserCommand::Trail { name, limit }) => {
            existing_user(store, &name).await?;
            let now = phantom_model::time::now_ms();
            let start = now - phantom_rules::trail::RETENTION_MS;
            let (events, _) = store
                .events(&name, start, now, None, limit, &|_| true)
                .await
                .map_err(|e| e.to_string())?;
            for e in events {
                let at = phantom_model::time::format_seconds(phantom_model::time::from_ms(e.at_ms));
                let outcome = e.error_code.as_deref().unwrap_or("done");
                let resources: Vec<&str> = e.resources.iter().map(|r| r.name.as_str()).collect();
                println!(
                    "{at} {} {} {outcome} {}",
                    phantom_rules::trail::username(&e),
                    e.event_name,
                    resources.join(",")
                );
            }
        }
        Command::User(UserCommand::Rotate { name }) => {
            let user = existing_user(store, &name).await?;
            let (key, secret) = (identity::new_access_key_id(), identity::new_secret());
            store
                .rotate_access_key(&user, &key, &secret)
                .await
                .map_err(|e| e.to_string())?;
            println!("{key} {secret}");
        }
        Command::Cloud(CloudCommand::Add {
            name,
            endpoint,
            region,
            zone,
            no_launch_templates,
            no_load_balancers,
            events,
        }) => {
            let zone = zone.unwrap_or_else(|| format!("{region}a"));
            let cloud = CloudRecord {
                name,
                endpoint,
                region,
                zone,
                launch_templates: !no_launch_templates,
                load_balancers: !no_load_balancers,
                events,
                // Asked again: a cloud put anew may have gained the call.
                status_checks: true,
            };
            store.put_cloud(&cloud).await.map_err(|e| e.to_string())?;
        }
        Command::Cloud(CloudCommand::List) => {
            for c in store.clouds().await.map_err(|e| e.to_string())? {
                let templates = if c.launch_templates {
                    "launch-templates"
                } else {
                    "no-launch-templates"
                };
                let balancers = if c.load_balancers {
                    "load-balancers"
                } else {
                    "no-load-balancers"
                };
                let events = if c.events { "events" } else { "no-events" };
                let checks = if c.status_checks {
                    "status-checks"
                } else {
                    "no-status-checks"
                };
                println!(
                    "{}\t{}\t{}\t{}\t{templates}\t{balancers}\t{events}\t{checks}",
                    c.name, c.endpoint, c.region, c.zone
                );
            }
        }
        Command::Credentials(CredentialsCommand::Set {
            user,
            cloud,
            access_key_id,
            secret_access_key,
        }) => {
            let creds = CloudCredentials {
                cloud: cloud.clone(),
                access_key_id,
                secret: secret_access_key,
            };
            match store.put_cloud_credentials(&user, &creds).await {
                Ok(()) => {}
                Err(StoreError::NotFound) => {
                    return Err(format!("user '{user}' or cloud '{cloud}' does not exist"))
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        Command::MetricSource(command) => metric_source(command, store).await?,
    }
    Ok(())
}

/// The value of the environment variable `name`, if a name is given.
fn secret_from(name: Option<&str>) -> Result<Option<String>, String> {
    name.map(|n| std::env::var(n).map_err(|_| format!("environment variable {n} is not set")))
        .transpose()
}

async fn metric_source(command: MetricSourceCommand, store: &dyn Directory) -> Result<(), String> {
    match command {
        MetricSourceCommand::Set {
            url,
            instance_label,
            bearer_token_env,
            basic_user,
            basic_password_env,
        } => {
            let token = secret_from(bearer_token_env.as_deref())?;
            let password = secret_from(basic_password_env.as_deref())?;
            let source = phantom_rules::tracking::metric_source(
                &url,
                &instance_label,
                token.as_deref(),
                (basic_user.as_deref(), password.as_deref()),
            )
            .map_err(|e| e.to_string())?;
            store
                .put_metric_source(&source)
                .await
                .map_err(|e| e.to_string())
        }
        MetricSourceCommand::Show => {
            match store.metric_source().await.map_err(|e| e.to_string())? {
                None => return Err("no metric source is set".into()),
                Some(s) => {
                    let auth = match s.auth {
                        None => "none".to_string(),
                        Some(MetricAuth::Bearer(_)) => "bearer".to_string(),
                        Some(MetricAuth::Basic { user, .. }) => format!("basic:{user}"),
                    };
                    println!("{}\t{}\t{auth}", s.url, s.instance_label);
                }
            }
            Ok(())
        }
        MetricSourceCommand::Delete => match store.delete_metric_source().await {
            Ok(()) => Ok(()),
            Err(StoreError::NotFound) => Err("no metric source is set".into()),
            Err(e) => Err(e.to_string()),
        },
    }
}

async fn existing_user(store: &dyn Directory, name: &str) -> Result<User, String> {
    store
        .user(name)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("user '{name}' does not exist"))
}
