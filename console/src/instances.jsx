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
      <table class="stack" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Instance</th>
            <th scope="col">Lifecycle</th>
            <th scope="col">Health</th>
            <th scope="col">Zone</th>
            <th scope="col">Cloud</th>
          </tr>
        </thead>
        <tbody>
          {instances.map((i) => (
            <tr key={i.InstanceId}>
              <td data-label="Instance">
                <code>{i.InstanceId}</code>
              </td>
              <td data-label="Lifecycle">
                <span class={`state state-${String(i.LifecycleState).split(':')[0]}`}>{i.LifecycleState}</span>
              </td>
              <td data-label="Health">
                <span class={`health health-${i.HealthStatus}`}>{i.HealthStatus}</span>
              </td>
              <td data-label="Zone">{i.AvailabilityZone}</td>
              <td data-label="Cloud">{cloudOfResource(i)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
