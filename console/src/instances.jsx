// A group's VMs: id, lifecycle, health, zone and the cloud it runs on.
import { cloudOf } from './ui.jsx';

/** The cloud of a VM or group: the part after `@` of its launch configuration (or template). */
export function cloudOfResource(resource) {
  const name = resource.LaunchConfigurationName || resource.LaunchTemplate?.LaunchTemplateName || '';
  return cloudOf(name) || 'default cloud';
}

export function InstancesTable({ instances, label }) {
  if (instances.length === 0) return <p class="muted">No instances.</p>;
  return (
    <div class="table-wrap">
      <table class="stack" role="table" aria-label={label}>
        <thead role="rowgroup">
          <tr role="row">
            <th scope="col" role="columnheader">Instance</th>
            <th scope="col" role="columnheader">Lifecycle</th>
            <th scope="col" role="columnheader">Health</th>
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
              <td role="cell" data-label="Zone">{i.AvailabilityZone}</td>
              <td role="cell" data-label="Cloud">{cloudOfResource(i)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
