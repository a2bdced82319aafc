//! `MemoryClouds`: endpoints connected to memory clouds, and `Nowhere`, the cloud of an endpoint
//! no memory cloud answers.

use super::*;

/// Endpoints to memory clouds; an unknown endpoint is unreachable.
#[derive(Default)]
pub struct MemoryClouds {
    clouds: Mutex<BTreeMap<String, Arc<MemoryCloud>>>,
}

impl MemoryClouds {
    pub fn add(&self, endpoint: &str, cloud: Arc<MemoryCloud>) {
        self.clouds
            .lock()
            .expect("no panic holding the map")
            .insert(endpoint.to_string(), cloud);
    }
}

pub(super) struct Nowhere;

#[async_trait]
impl Lookup for Nowhere {
    async fn states(&self, _: &str) -> Result<Vec<(String, CloudState)>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn describe(&self, _: &[String]) -> Result<Vec<Tagged>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn launched_with(&self, _: &str) -> Result<Option<LaunchedWith>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn template(&self, _: &TemplateRef) -> Result<Option<FoundTemplate>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn subnet_zones(&self, _: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn zone_names(&self, _: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn reservation_zones(&self, _: &[String]) -> Result<Vec<(String, String)>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn statuses(&self, _: &[String]) -> Result<Vec<InstanceStatus>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
}

#[async_trait]
impl Cloud for Nowhere {
    async fn tag(&self, _: &[String], _: &[(String, String)]) -> Result<(), CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn untag(&self, _: &[String], _: &[&str]) -> Result<(), CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn tagged(&self, _: &str, _: Option<&str>) -> Result<Vec<Tagged>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn launch(&self, _: &LaunchRequest) -> Result<Vec<Seen>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn terminate(&self, _: &[String]) -> Result<(), CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn stop(&self, _: &[String], _: bool) -> Result<(), CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn start(&self, _: &[String]) -> Result<(), CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn spot_prices(&self, _: &[String]) -> Result<Vec<SpotPrice>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn instance_types(
        &self,
    ) -> Result<Vec<phantom_model::instance_type::InstanceTypeInfo>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
}

#[async_trait]
impl Catalog for Nowhere {
    async fn images(&self) -> Result<Vec<Image>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn key_pairs(&self) -> Result<Vec<KeyPair>, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
    async fn import_key_pair(&self, _: &str, _: &str) -> Result<String, CloudError> {
        Err(CloudError::unreachable("no cloud at that endpoint"))
    }
}

impl MemoryClouds {
    fn at(&self, endpoint: &str) -> Option<Arc<MemoryCloud>> {
        self.clouds
            .lock()
            .expect("no panic holding the map")
            .get(endpoint)
            .cloned()
    }
}

#[async_trait]
impl ConnectLookup for MemoryClouds {
    fn lookup(&self, cloud: &CloudRecord, creds: &CloudCredentials) -> Arc<dyn Lookup> {
        self.connect(cloud, creds)
    }

    fn balancers(
        &self,
        cloud: &CloudRecord,
        _creds: &CloudCredentials,
    ) -> Option<Arc<dyn crate::cloud::Balancers>> {
        cloud
            .load_balancers
            .then(|| match self.at(&cloud.endpoint) {
                Some(c) => c as Arc<dyn crate::cloud::Balancers>,
                None => Arc::new(Nowhere),
            })
    }

    fn catalog(&self, cloud: &CloudRecord, _creds: &CloudCredentials) -> Arc<dyn Catalog> {
        match self.at(&cloud.endpoint) {
            Some(c) => c,
            None => Arc::new(Nowhere),
        }
    }

    async fn reachable(&self, cloud: &CloudRecord) -> bool {
        self.at(&cloud.endpoint)
            .is_some_and(|c| !c.state().unreachable)
    }
}

impl Connect for MemoryClouds {
    fn connect(&self, cloud: &CloudRecord, _creds: &CloudCredentials) -> Arc<dyn Cloud> {
        match self.at(&cloud.endpoint) {
            Some(c) => c,
            None => Arc::new(Nowhere),
        }
    }
}
