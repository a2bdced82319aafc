// The account's audit trail (CloudTrail's LookupEvents at Phantom's endpoint): who changed what,
// and what a policy refused, newest first; for the account, or for one group.
import { ErrorBox, Loading, StackTable, time, useData, useSession } from './ui.jsx';

/** The events of the trail, all of the account's or those naming `resourceName`. */
export function TrailTable({ resourceName, label }) {
  const { api } = useSession();
  const events = useData(async () => {
    const input = resourceName
      ? { LookupAttributes: [{ AttributeKey: 'ResourceName', AttributeValue: resourceName }], MaxResults: 50 }
      : { MaxResults: 50 };
    return (await api.lookupEvents(input)).Events || [];
  }, [api, resourceName]);
  const record = (e) => {
    try {
      return JSON.parse(e.CloudTrailEvent);
    } catch {
      return {};
    }
  };
  return (
    <>
      <ErrorBox error={events.error} onRetry={events.reload} />
      <Loading state={events} what="events" />
      {events.data && (
        <StackTable
          label={label}
          rows={events.data}
          rowKey={(e) => e.EventId}
          columns={[
            { header: 'Time', cell: (e) => time(new Date(e.EventTime * 1000).toISOString()) },
            { header: 'Who', cell: (e) => e.Username },
            { header: 'Action', cell: (e) => e.EventName },
            { header: 'Resources', cell: (e) => (e.Resources || []).map((r) => r.ResourceName).join(', ') },
            {
              header: 'Outcome',
              cell: (e) => {
                const r = record(e);
                return r.errorCode ? <span class="bad">{r.errorCode}</span> : 'done';
              },
            },
            { header: 'From', cell: (e) => record(e).sourceIPAddress || '' },
          ]}
        />
      )}
      {events.data && events.data.length === 0 && <p class="muted">Nothing recorded yet.</p>}
    </>
  );
}

export function TrailView() {
  return (
    <section aria-labelledby="trail-title">
      <h1 id="trail-title">Trail</h1>
      <p class="muted">
        Every change made in this account, and every request a policy refused, for 90 days (the same as
        <code> aws cloudtrail lookup-events</code>).
      </p>
      <TrailTable label="Events" />
    </section>
  );
}
