// A group's VMs: id, lifecycle, health, instance type, how it is bought (spot or on-demand, where
// the page knows), its weight (where the group's overrides give weights), zone and cloud.
import { cloudOf } from './ui.jsx';

/** The cloud of a VM or group: the part after `@` of its launch configuration (or template). */
export function cloudOfResource(resource) {
  const name = resource.LaunchConfigurationName || resource.LaunchTemplate?.LaunchTemplateName || '';
  return cloudOf(name) || 'default cloud';
}

/** `markets`: each VM's `spot` or `on-demand` by id (Phantom's DescribeInstanceMarkets), if known. */
export function InstancesTable({ instances, label, markets }) {
  if (instances.length === 0) return <p class="muted">No instances.</p>;
  const weighted = instances.some((i) => i.WeightedCapacity !== undefined);
  return (
    <div class="table-wrap">
      <table class="stack" role="table" aria-label={label}>
        <thead role="rowgroup">
          <tr role="row">
            <th scope="col" role="columnheader">Instance</th>
            <th scope="col" role="columnheader">Lifecycle</th>
            <th scope="col" role="columnheader">Health</th>
            <th scope="col" role="columnheader">Type</th>
            {markets && (
              <th scope="col" role="columnheader">
                Market
              </th>
            )}
            {weighted && (
              <th scope="col" role="columnheader">
                Weight
              </th>
            )}
            <th scope="col" role="columnheader">Zone</th>
            <th scope="col" role="columnheader">Cloud</th>
          </tr>
        </thead>
        <tbody role="rowgroup">
          {instances.map((i) => (
            <tr role="row" key={i.InstanceId}>
              <td role="cell" data-label="Instance">
                <code>{i.InstanceId}</code>
              </td>
              <td role="cell" data-label="Lifecycle">
                <span class={`state state-${String(i.LifecycleState).split(':')[0]}`}>{i.LifecycleState}</span>
              </td>
              <td role="cell" data-label="Health">
                <span class={`health health-${i.HealthStatus}`}>{i.HealthStatus}</span>
              </td>
              <td role="cell" data-label="Type">{i.InstanceType}</td>
              {markets && (
                <td role="cell" data-label="Market">
                  {markets[i.InstanceId] || '—'}
                </td>
              )}
              {weighted && (
                <td role="cell" data-label="Weight">
                  {i.WeightedCapacity ?? '—'}
                </td>
              )}
              <td role="cell" data-label="Zone">{i.AvailabilityZone}</td>
              <td role="cell" data-label="Cloud">{cloudOfResource(i)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
