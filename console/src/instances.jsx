// A group's VMs: id, lifecycle, health (and why, where a check fails it), instance type, how it is bought (spot or on-demand, where
// the page knows), its weight (where the group's overrides give weights), zone and cloud.
import { cloudOf, StackTable } from './ui.jsx';

/** The cloud of a VM or group: the part after `@` of its launch configuration (or template). */
export function cloudOfResource(resource) {
  const name = resource.LaunchConfigurationName || resource.LaunchTemplate?.LaunchTemplateName || '';
  return cloudOf(name) || 'default cloud';
}

/**
 * `markets`: each VM's `spot` or `on-demand` by id (Phantom's DescribeInstanceMarkets), if known;
 * `whys`: why a VM is unhealthy, by id (Phantom's DescribeInstanceHealth), if known.
 */
export function InstancesTable({ instances, label, markets, whys }) {
  if (instances.length === 0) return <p class="muted">No instances.</p>;
  const weighted = instances.some((i) => i.WeightedCapacity !== undefined);
  const columns = [
    { header: 'Instance', cell: (i) => <code>{i.InstanceId}</code> },
    { header: 'Lifecycle', cell: (i) => <span class={`state state-${String(i.LifecycleState).split(':')[0]}`}>{i.LifecycleState}</span> },
    { header: 'Health', cell: (i) => <span class={`health health-${i.HealthStatus}`}>{i.HealthStatus}</span> },
    whys && Object.keys(whys).length > 0 && { header: 'Why unhealthy', cell: (i) => whys[i.InstanceId] || '' },
    { header: 'Type', cell: (i) => i.InstanceType },
    markets && { header: 'Market', cell: (i) => markets[i.InstanceId] || '—' },
    weighted && { header: 'Weight', cell: (i) => i.WeightedCapacity ?? '—' },
    { header: 'Zone', cell: (i) => i.AvailabilityZone },
    { header: 'Cloud', cell: (i) => cloudOfResource(i) },
  ].filter(Boolean);
  return <StackTable label={label} rows={instances} rowKey={(i) => i.InstanceId} columns={columns} />;
}
