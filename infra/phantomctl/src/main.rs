//! phantomctl: Phantom's admin tool. It talks to DynamoDB with the same configuration as the
//! functions (PHANTOM_STATE_TABLE, AWS_REGION, AWS_ENDPOINT_URL, credentials from the environment), so it
//! works against the local stack and a deployed one alike.

use clap::{Parser, Subcommand};
use phantom::config::{aws_sdk_config, Config};
use phantom::identity::{self, User};
use phantom::store::{CloudCredentials, CloudRecord, Directory, DynamoStore, StoreError};
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
}

#[derive(Subcommand)]
enum UserCommand {
    /// Creates a user and prints `ACCESS_KEY SECRET` on one line.
    Create { name: String },
    /// Lists users: name, account id, access key id, created.
    List,
    /// Deletes the user's access key: requests signed with it are refused (within the api's key
    /// cache time, 30 s). The user's groups and VMs stay.
    Disable { name: String },
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
    },
    /// Lists clouds: name, endpoint, region, zone, whether it has launch templates.
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
    let store = DynamoStore::new(&aws_sdk_config().await, config.table);
    match run(cli.command, &store).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("phantomctl: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command, store: &dyn Directory) -> Result<(), String> {
    match command {
        Command::User(UserCommand::Create { name }) => {
            if !identity::valid_user_name(&name) {
                return Err(format!(
                    "user name '{name}' must be 1 to 64 letters, digits, '-', '_' or '.'"
                ));
            }
            let user = User {
                name: name.clone(),
                account_id: identity::new_account_id(),
                access_key_id: identity::new_access_key_id(),
                created: phantom::time::format_timestamp(phantom::time::now()),
            };
            let secret = identity::new_secret();
            match store.create_user(&user, &secret).await {
                Ok(()) => println!("{} {secret}", user.access_key_id),
                Err(StoreError::Exists) => return Err(format!("user '{name}' already exists")),
                Err(e) => return Err(e.to_string()),
            }
        }
        Command::User(UserCommand::List) => {
            for u in store.users().await.map_err(|e| e.to_string())? {
                println!(
                    "{}\t{}\t{}\t{}",
                    u.name, u.account_id, u.access_key_id, u.created
                );
            }
        }
        Command::User(UserCommand::Disable { name }) => {
            let users = store.users().await.map_err(|e| e.to_string())?;
            let Some(user) = users.iter().find(|u| u.name == name) else {
                return Err(format!("user '{name}' does not exist"));
            };
            match store.delete_access_key(&user.access_key_id).await {
                Ok(()) => {}
                Err(StoreError::NotFound) => {
                    return Err(format!("user '{name}' is disabled already"))
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        Command::Cloud(CloudCommand::Add {
            name,
            endpoint,
            region,
            zone,
            no_launch_templates,
        }) => {
            let zone = zone.unwrap_or_else(|| format!("{region}a"));
            let cloud = CloudRecord {
                name,
                endpoint,
                region,
                zone,
                launch_templates: !no_launch_templates,
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
                println!(
                    "{}\t{}\t{}\t{}\t{templates}",
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
    }
    Ok(())
}
