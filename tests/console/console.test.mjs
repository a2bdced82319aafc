// The web console in a real browser (Debian's chromium, driven by playwright-core) against a running
// local stack: `node --test tests/console/console.test.mjs` with the stack's env (PHANTOM_URL, the
// demo user's AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, the admin's PHANTOM_ADMIN_ACCESS_KEY_ID /
// PHANTOM_ADMIN_SECRET_ACCESS_KEY, PHANTOM_CLOUD_HOTEL_URL, PHANTOM_CLOUD_SIERRA_URL). tests/tests/
// console.rs starts a stack and runs this. PHANTOM_CONSOLE_URL overrides where the page is
// (default $PHANTOM_URL/console/); PHANTOM_SCREENSHOTS=<dir> saves the main pages as PNGs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// The console's own packages: playwright-core (no browser of its own) and aws4fetch.
const require = createRequire(new URL('../../console/package.json', import.meta.url));
const { chromium } = require('playwright-core');
const { AwsClient } = require('aws4fetch');

function need(name) {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run this with the local stack's env (tests/tests/e2e/console.rs)`);
  return value;
}

const API = need('PHANTOM_URL').replace(/\/$/, '');
const CONSOLE = process.env.PHANTOM_CONSOLE_URL || `${API}/console/`;
const DEMO = { id: need('AWS_ACCESS_KEY_ID'), secret: need('AWS_SECRET_ACCESS_KEY') };
const ADMIN = { id: need('PHANTOM_ADMIN_ACCESS_KEY_ID'), secret: need('PHANTOM_ADMIN_SECRET_ACCESS_KEY') };
const HOTEL = need('PHANTOM_CLOUD_HOTEL_URL');
const SIERRA = need('PHANTOM_CLOUD_SIERRA_URL');
const SHOTS = process.env.PHANTOM_SCREENSHOTS;
const IMAGE = 'ami-1e749f67';
// Names of this run, so a rerun on the same stack starts clean.
const RUN = Date.now().toString(36);
const HOSTILE = `<script>alert(1)</script>"'`;

const WAIT = 90_000;

let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  // A fresh moto server sets up its answer of each EC2 action on the action's first call, and two
  // first calls at once can fail it (HTTP 500, 'dictionary changed size during iteration'): the
  // console asks a cloud for its images and key pairs together, so each cloud answers both once
  // first. Its first listing of every available image (the console's DescribeCloudImages) reads
  // its whole catalogue: 13 s on an idle 2-core machine, past the api's 8 s timeout for a cloud
  // call, so it is made here too (about 1 s after). Real clouds have no such warm-up.
  await Promise.all(
    [HOTEL, SIERRA].map(async (cloud) => {
      await ec2(cloud, { Action: 'DescribeKeyPairs' });
      await ec2(cloud, { Action: 'DescribeImages', 'ImageId.1': IMAGE });
      await ec2(cloud, { Action: 'DescribeImages', 'Filter.1.Name': 'state', 'Filter.1.Value.1': 'available' });
    }),
  );
});

after(async () => {
  await browser?.close();
});

/** A page of its own (fresh storage); a script error, a CSP violation or a dialog fails the test. */
async function newPage({ width = 1280, height = 800 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) page.problems.push(`CSP: ${m.text()}`);
  });
  page.on('dialog', (d) => {
    page.problems.push(`a ${d.type()} dialog fired: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  return page;
}

async function done(page) {
  assert.deepEqual(page.problems, [], 'the page ran without script errors, CSP violations or dialogs');
  await page.context().close();
}

async function screenshot(page, name, options = {}) {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), ...options });
}

async function signIn(page, { id, secret }) {
  await page.goto(CONSOLE);
  await page.getByLabel('Access key ID').fill(id);
  await page.getByLabel('Secret access key').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function signedIn(page, user, name) {
  await signIn(page, user);
  await page.getByText(`Signed in as ${name}`).waitFor();
}

/** Retries `check` (truthy when done) until it holds or `timeout` passes. */
async function eventually(check, message, timeout = WAIT) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) assert.fail(`${message} (after ${timeout / 1000} s; last: ${last})`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Waits for `until()` after a submit, failing at once with the error the page shows in `scope`
 * (role alert) if one appears first.
 */
async function succeeds(scope, what, until) {
  const alert = scope.getByRole('alert').first();
  let shown;
  const watch = alert.waitFor({ timeout: WAIT }).then(
    async () => {
      shown = `${await alert.locator(".error-code").textContent()}: ${await alert.locator(".error-message").textContent()}`;
    },
    () => {},
  );
  const done = until().then(
    () => true,
    (e) => {
      if (!shown) throw e;
    },
  );
  await Promise.race([done, watch]);
  if (shown) assert.fail(`${what}: the page shows the error ${shown}`);
  await done;
}

/** Phantom's JSON API from here, signed as a user (what the console does in the browser). */
async function phantom(user, operation, input = {}) {
  const signer = new AwsClient({ accessKeyId: user.id, secretAccessKey: user.secret, service: 'autoscaling', region: 'us-east-1', retries: 0 });
  const response = await signer.fetch(`${API}/phantom/v1/${operation}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(input),
  });
  return { status: response.status, body: await response.json() };
}

/** An Auto Scaling Query action from here, signed as a user; the XML answer as text. */
async function autoscaling(user, params) {
  const signer = new AwsClient({ accessKeyId: user.id, secretAccessKey: user.secret, service: 'autoscaling', region: 'us-east-1', retries: 0 });
  const body = new URLSearchParams({ Version: '2011-01-01', ...params }).toString();
  const response = await signer.fetch(`${API}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body,
  });
  const text = await response.text();
  assert.ok(response.ok, `${params.Action}: ${response.status} ${text}`);
  return text;
}

/** A CloudWatch action at Phantom's endpoint, in its JSON protocol (as the AWS CLI sends it),
 * signed as a user; the JSON answer. */
async function cloudwatch(user, operation, input = {}) {
  const signer = new AwsClient({ accessKeyId: user.id, secretAccessKey: user.secret, service: 'monitoring', region: 'us-east-1', retries: 0 });
  const response = await signer.fetch(`${API}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `GraniteServiceVersion20100801.${operation}` },
    body: JSON.stringify(input),
  });
  const text = await response.text();
  assert.ok(response.ok, `${operation}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

/** An EC2 Query action on a local cloud (moto takes any credentials). */
async function ec2(cloudUrl, params) {
  const signer = new AwsClient({ accessKeyId: 'tester', secretAccessKey: 'tester', service: 'ec2', region: 'us-east-1', retries: 0 });
  const response = await signer.fetch(`${cloudUrl}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body: new URLSearchParams({ Version: '2016-11-15', ...params }).toString(),
  });
  const text = await response.text();
  assert.ok(response.ok, `${params.Action}: ${response.status} ${text}`);
  return text;
}

/** Goes to a page of the navigation. */
async function go(page, name) {
  await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
}

/** A fresh ed25519 public key in OpenSSH's format. */
function sshPublicKey(comment) {
  const der = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' });
  const field = (bytes) => Buffer.concat([Buffer.from([0, 0, 0, bytes.length]), bytes]);
  const blob = Buffer.concat([field(Buffer.from('ssh-ed25519')), field(der.subarray(der.length - 32))]);
  return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}

async function createLaunchConfiguration(page, name, { cloud = 'hotel', shot = false } = {}) {
  await go(page, 'Launch configurations');
  await page.getByRole('button', { name: 'Create launch configuration' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create launch configuration' });
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('Cloud').selectOption(cloud);
  // The images are the cloud's own (DescribeCloudImages): typed, and named once recognised.
  const image = dialog.getByLabel('Image');
  await image.fill(IMAGE);
  await succeeds(dialog, `listing the images of ${cloud}`, () =>
    eventually(
      async () => (await dialog.locator(`datalist option[value="${IMAGE}"]`).count()) === 1,
      `the image picker offers ${IMAGE} of ${cloud}`,
      // A fresh moto reads its image catalogue on the first DescribeImages: seconds on a busy machine.
      WAIT,
    ),
  );
  await dialog.getByText(/ubuntu-trusty-14\.04.*\(x86_64\)/).waitFor();
  await dialog.getByLabel('Instance type').selectOption('t3.small');
  if (shot) await screenshot(page, 'launch-configuration-form');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await succeeds(dialog, `creating ${name}@${cloud}`, () => dialog.waitFor({ state: 'detached' }));
  await page.getByRole('table', { name: 'Launch configurations' }).getByRole('cell', { name: `${name}@${cloud}`, exact: true }).waitFor();
}

async function createGroup(page, { name, config, min, max, desired, tagKey, tagValue }) {
  await go(page, 'Groups');
  await page.getByRole('button', { name: 'Create group' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create group' });
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await eventually(
    async () => (await dialog.getByLabel('Launch configuration').locator('option').allTextContents()).includes(config),
    `the launch configuration picker offers ${config}`,
    30_000,
  );
  await dialog.getByLabel('Launch configuration').selectOption(config);
  await dialog.getByLabel('Min size').fill(String(min));
  await dialog.getByLabel('Max size').fill(String(max));
  await dialog.getByLabel('Desired capacity').fill(String(desired));
  if (tagKey) {
    await dialog.getByLabel('Tag key').fill(tagKey);
    await dialog.getByLabel('Tag value').fill(tagValue);
  }
  await dialog.getByRole('button', { name: 'Create' }).click();
  await succeeds(dialog, `creating group ${name}`, () => dialog.waitFor({ state: 'detached' }));
  return page.getByRole('article', { name: `Group ${name}` });
}

/** The instance ids shown in a table of instances, and how many are InService. */
/** What a chart's legend shows under the cursor (uPlot's legend follows it), pointed at its latest
 * datapoint of `series`: from the right edge leftwards until the series has a value there.
 * Returns the time and the value shown. */
async function latestUnderCursor(page, chart, series) {
  await chart.scrollIntoViewIfNeeded();
  const box = await chart.locator('.u-over').boundingBox();
  const legend = chart.locator('.u-legend');
  for (let x = box.width - 1; x > 0; x -= 4) {
    await page.mouse.move(box.x + x, box.y + box.height / 2);
    const value = (await legend.locator('.u-series', { hasText: series }).locator('.u-value').textContent()).trim();
    if (value !== 'no data') return { time: (await legend.locator('.u-series').first().locator('.u-value').textContent()).trim(), value };
  }
  return { time: null, value: 'no data' };
}

async function shownInstances(scope) {
  const ids = await scope.locator('td[data-label="Instance"]').allTextContents();
  const inService = await scope.getByRole('cell', { name: 'InService', exact: true }).count();
  return { ids, inService };
}

test('a wrong secret shows the API error, Code and Message', async () => {
  const wrong = { id: DEMO.id, secret: `${DEMO.secret.slice(0, -4)}XXXX` };
  const expected = await phantom(wrong, 'GetCallerIdentity');
  assert.equal(expected.status, 403);
  assert.equal(expected.body.Error.Code, 'SignatureDoesNotMatch');
  const page = await newPage();
  await signIn(page, wrong);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.equal(await alert.locator('.error-code').textContent(), 'SignatureDoesNotMatch');
  assert.equal(await alert.locator('.error-message').textContent(), expected.body.Error.Message);
  assert.equal(await page.getByLabel('Access key ID').isVisible(), true, 'still on the sign-in form');
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'nothing kept of a failed sign-in');
  await done(page);
});

test('sign-out removes the secret from the tab', async () => {
  const page = await newPage();
  await signedIn(page, DEMO, 'demo');
  const stored = () => page.evaluate(() => Object.values({ ...sessionStorage }).join('\n'));
  assert.ok((await stored()).includes(DEMO.secret), 'the secret is kept in sessionStorage while signed in');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  assert.ok(!(await stored()).includes(DEMO.secret), 'the secret is gone after sign-out');
  await page.reload();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await done(page);
});

test('the demo user runs a group: create, InService, resize, a VM killed and replaced, delete', { timeout: 300_000 }, async () => {
  const page = await newPage();
  await signedIn(page, DEMO, 'demo');
  const lc = `web${RUN}`;
  const group = `web-${RUN}`;
  await createLaunchConfiguration(page, lc, { shot: true });
  await screenshot(page, 'launch-configurations');

  const card = await createGroup(page, { name: group, config: `${lc}@hotel`, min: 1, max: 5, desired: 2 });
  await eventually(async () => (await shownInstances(card)).inService === 2, 'both VMs are InService on the groups page');
  const first = await shownInstances(card);
  assert.equal(first.ids.length, 2);
  assert.equal(await card.getByRole('cell', { name: 'hotel', exact: true }).count(), 2, 'each VM shows its cloud');
  await screenshot(page, 'groups');

  // The phone's width: one column, every VM still there.
  await page.setViewportSize({ width: 375, height: 812 });
  assert.equal((await shownInstances(card)).inService, 2);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `nothing wider than the phone's screen (${overflow} px over)`);
  await screenshot(page, 'groups-phone');
  await page.setViewportSize({ width: 1280, height: 800 });

  await card.getByRole('link', { name: group }).click();
  await page.getByRole('heading', { name: `Group ${group}` }).waitFor();
  // Its capacity charted from the local Prometheus once its metrics are enabled.
  await page.getByRole('button', { name: 'Enable capacity metrics' }).click();
  const chart = page.locator('figure.capacity-chart');
  const caption = () => chart.locator('figcaption').textContent();
  await eventually(async () => /Now desired 2, InService 2, pending 0/.test(await caption()), 'the chart shows the group at 2', 90_000);
  await page.getByLabel('New desired capacity').fill('3');
  await page.getByRole('button', { name: 'Set desired capacity' }).click();
  const resize = page.getByRole('form', { name: 'Set desired capacity' });
  // The form empties once the API took it.
  await succeeds(resize, 'setting the desired capacity', () =>
    eventually(async () => (await page.getByLabel('New desired capacity').inputValue()) === '', 'the capacity is set', 30_000),
  );
  // A form checks what it can before it sends: bounds need a new min, a new max or both.
  const bounds = page.getByRole('form', { name: 'Change min and max' });
  await bounds.getByRole('button', { name: 'Update min and max' }).click();
  await bounds.getByRole('alert').filter({ hasText: 'Give a new min size, a new max size or both.' }).waitFor();
  const instances = page.getByRole('table', { name: `Instances of ${group}` });
  await eventually(async () => (await shownInstances(instances)).inService === 3, 'the third VM is InService');
  // Each VM's type and how it is bought (spot or on-demand: Phantom's DescribeInstanceMarkets).
  await eventually(
    async () => (await instances.getByRole('cell', { name: 'on-demand', exact: true }).count()) === 3,
    'each VM shows it is on-demand',
  );
  assert.equal(await instances.getByRole('columnheader', { name: 'Type', exact: true }).count(), 1);
  const activity = page.getByRole('table', { name: 'Activity' });
  await eventually(
    async () => (await activity.getByRole('cell', { name: 'Successful', exact: false }).count()) >= 3,
    'three successful launches in the activity',
  );
  assert.match(await activity.textContent(), /Launching a new EC2 instance/);

  // A VM dies on the cloud: the group replaces it and the page shows the new one.
  const before = (await shownInstances(instances)).ids;
  const victim = before[0];
  await ec2(HOTEL, { Action: 'TerminateInstances', 'InstanceId.1': victim });
  await eventually(async () => {
    const now = await shownInstances(instances);
    return !now.ids.includes(victim) && now.ids.length === 3 && now.inService === 3;
  }, `${victim} is replaced by a new InService VM`);
  await eventually(
    async () => (await activity.textContent()).includes(victim),
    `the activity tells of ${victim}`,
  );
  // The chart followed: at 3 again, the launches and the replacement marked on its time line.
  await eventually(async () => {
    const text = await caption();
    const marked = Number((text.match(/; (\d+) scaling activit/) || [])[1] || 0);
    return /Now desired 3, InService 3/.test(text) && marked >= 5;
  }, 'the chart shows the group at 3 with its activities marked', 60_000);
  assert.ok((await chart.locator('li.mark.activity').count()) >= 5, 'each activity is a mark');
  const latest = await latestUnderCursor(page, chart, 'InService');
  assert.equal(latest.value, '3', 'the cursor shows InService at 3 at the end');
  assert.match(latest.time, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, 'and the time it points at');
  await screenshot(page, 'group-capacity');
  await screenshot(page, 'group-activity', { fullPage: true });

  await page.getByRole('button', { name: 'Delete group' }).click();
  const confirm = page.getByRole('dialog', { name: `Delete group ${group}?` });
  assert.equal(await confirm.getByLabel('Terminate its instances too (force delete)').isChecked(), true);
  await confirm.getByRole('button', { name: 'Delete' }).click();
  await succeeds(confirm, `deleting ${group}`, () => confirm.waitFor({ state: 'detached' }));
  await page.getByText('This group does not exist (any more).').waitFor({ timeout: WAIT });
  await go(page, 'Groups');
  await page.getByRole('heading', { name: 'Groups' }).waitFor();
  await page.waitForTimeout(500);
  assert.equal(await page.getByRole('article', { name: `Group ${group}` }).count(), 0);
  await done(page);
});

test("a group's policies and schedule: a policy run by hand, actions scheduled, a mistake refused, deleted", { timeout: 120_000 }, async () => {
  const lc = `sched${RUN}@hotel`;
  const group = `sched-${RUN}`;
  await autoscaling(DEMO, { Action: 'CreateLaunchConfiguration', LaunchConfigurationName: lc, ImageId: IMAGE, InstanceType: 't2.micro' });
  await autoscaling(DEMO, { Action: 'CreateAutoScalingGroup', AutoScalingGroupName: group, LaunchConfigurationName: lc, MinSize: '0', MaxSize: '3', DesiredCapacity: '0' });
  await autoscaling(DEMO, { Action: 'PutScalingPolicy', AutoScalingGroupName: group, PolicyName: 'add-one', AdjustmentType: 'ChangeInCapacity', ScalingAdjustment: '1' });
  const describe = () => autoscaling(DEMO, { Action: 'DescribeAutoScalingGroups', 'AutoScalingGroupNames.member.1': group });
  const page = await newPage();
  await signedIn(page, DEMO, 'demo');
  await page.goto(`${CONSOLE}#/groups/${encodeURIComponent(group)}`);

  const policy = page.getByRole('table', { name: 'Scaling policies' }).getByRole('row').filter({ hasText: 'add-one' });
  await policy.waitFor();
  assert.match(await policy.textContent(), /SimpleScaling.*\+1 instance/);
  await page.getByRole('button', { name: 'Run policy add-one' }).click();
  await succeeds(page, 'running add-one', () => page.getByText('Policy add-one ran.').waitFor());
  assert.match(await describe(), /<DesiredCapacity>1<\/DesiredCapacity>/, 'the policy raised the desired capacity');
  const desired = page.locator('dl.facts div').filter({ hasText: 'Desired' }).locator('dd');
  await eventually(async () => (await desired.textContent()) === '1', 'the page shows the new desired capacity', 30_000);

  const form = page.getByRole('form', { name: 'Schedule an action' });
  const schedule = page.getByRole('table', { name: 'Scheduled actions' });
  const row = (name) => schedule.getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) });
  await form.getByLabel('Action name').fill('nightly');
  await form.getByLabel('Recurrence').fill('0 3 * * *');
  await form.getByLabel('Time zone').fill('Europe/Paris');
  await form.getByLabel('Desired', { exact: true }).fill('0');
  await form.getByRole('button', { name: 'Schedule' }).click();
  await succeeds(form, 'scheduling nightly', () => row('nightly').waitFor());
  assert.match(await row('nightly').textContent(), /0 3 \* \* \* \(Europe\/Paris\).*desired 0/);
  let stored = await autoscaling(DEMO, { Action: 'DescribeScheduledActions', AutoScalingGroupName: group });
  assert.match(stored, /<Recurrence>0 3 \* \* \*<\/Recurrence>/);
  assert.match(stored, /<TimeZone>Europe\/Paris<\/TimeZone>/);

  // Once, tomorrow at this minute (the browser's zone, which is this process's).
  const at = new Date(Date.now() + 86_400_000);
  at.setSeconds(0, 0);
  const pad = (n) => String(n).padStart(2, '0');
  const local = `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
  await form.getByLabel('Once', { exact: true }).check();
  await form.getByLabel('Action name').fill('tomorrow');
  await form.getByLabel('At', { exact: true }).fill(local);
  await form.getByLabel('Desired', { exact: true }).fill('2');
  await form.getByRole('button', { name: 'Schedule' }).click();
  await succeeds(form, 'scheduling tomorrow', () => row('tomorrow').waitFor());
  assert.match(await row('tomorrow').textContent(), /once.*desired 2/);
  stored = await autoscaling(DEMO, { Action: 'DescribeScheduledActions', AutoScalingGroupName: group, 'ScheduledActionNames.member.1': 'tomorrow' });
  assert.ok(stored.includes(`<StartTime>${at.toISOString()}</StartTime>`), `stored at ${at.toISOString()}: ${stored}`);

  // A cron expression that never occurs: the API's words in the form, nothing stored.
  await form.getByLabel('Repeatedly (cron)', { exact: true }).check();
  await form.getByLabel('Action name').fill('never');
  await form.getByLabel('Recurrence').fill('61 * * * *');
  await form.getByRole('button', { name: 'Schedule' }).click();
  const refused = form.getByRole('alert');
  await refused.waitFor();
  assert.equal(await refused.locator('.error-code').textContent(), 'ValidationError');
  assert.equal(await row('never').count(), 0);

  await page.getByRole('button', { name: 'Delete scheduled action nightly' }).click();
  await eventually(async () => (await row('nightly').count()) === 0, 'nightly is gone from the page', 30_000);
  stored = await autoscaling(DEMO, { Action: 'DescribeScheduledActions', AutoScalingGroupName: group });
  assert.doesNotMatch(stored, /nightly/);
  assert.match(stored, /tomorrow/);
  await screenshot(page, 'group-schedule', { fullPage: true });
  await done(page);
  await autoscaling(DEMO, { Action: 'DeleteAutoScalingGroup', AutoScalingGroupName: group, ForceDelete: 'true' });
});

test('names, tags and values with markup and quotes show as text', async () => {
  const page = await newPage();
  await signedIn(page, DEMO, 'demo');
  const lcName = `${HOSTILE}${RUN}`;
  const group = `${HOSTILE}g${RUN}`;
  const tagKey = `k"'<b>bold</b>${RUN}`;
  await createLaunchConfiguration(page, lcName);
  const lcCell = page.getByRole('cell', { name: `${lcName}@hotel`, exact: true });
  assert.equal(await lcCell.textContent(), `${lcName}@hotel`);

  const card = await createGroup(page, { name: group, config: `${lcName}@hotel`, min: 0, max: 1, desired: 0, tagKey, tagValue: HOSTILE });
  await card.waitFor();
  assert.equal(await card.getByRole('link', { name: group, exact: true }).textContent(), group);
  await card.getByRole('link', { name: group, exact: true }).click();
  const tags = page.getByRole('table', { name: 'Tags' });
  await tags.waitFor();
  assert.equal(await tags.getByRole('cell', { name: tagKey, exact: true }).textContent(), tagKey);
  assert.equal(await tags.getByRole('cell', { name: HOSTILE, exact: true }).textContent(), HOSTILE);
  assert.equal(await page.locator('#app script, #app b').count(), 0, 'no markup from data became elements');
  await page.getByRole('button', { name: 'Delete group' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.getByText('This group does not exist (any more).').waitFor({ timeout: WAIT });
  await done(page);
});

test("a group's health checks: its status checks' confirmation, its probe, and the heartbeat URL its VMs call", { timeout: 60_000 }, async () => {
  const group = `beats${RUN}`;
  await autoscaling(DEMO, { Action: 'CreateLaunchConfiguration', LaunchConfigurationName: `beats${RUN}@hotel`, ImageId: IMAGE, InstanceType: 't2.micro' });
  await autoscaling(DEMO, {
    Action: 'CreateAutoScalingGroup', AutoScalingGroupName: group, LaunchConfigurationName: `beats${RUN}@hotel`, MinSize: '0', MaxSize: '1',
    'Tags.member.1.Key': 'phantom:health-probe', 'Tags.member.1.Value': 'heartbeat://?interval=60',
    'Tags.member.2.Key': 'phantom:status-check-confirm-seconds', 'Tags.member.2.Value': '30',
  });
  const page = await newPage();
  await signedIn(page, DEMO, 'demo');
  await page.goto(`${CONSOLE}#/groups/${encodeURIComponent(group)}`);
  const checks = page.getByRole('table', { name: 'Health checks' });
  await checks.waitFor({ timeout: WAIT });
  await checks.getByRole('cell', { name: 'heartbeat://?interval=60', exact: true }).waitFor();
  await checks.getByRole('cell', { name: 'an impairment confirmed after 30 s', exact: true }).waitFor();
  await page.getByRole('button', { name: 'Show heartbeat URL' }).click();
  const shown = await page.getByTestId('heartbeat-url').textContent();
  const asked = (await phantom(DEMO, 'GetHeartbeatUrl', { AutoScalingGroupName: group })).body.Url;
  assert.equal(shown, asked, 'the URL the API gives');
  assert.match(shown, /\/phantom\/v1\/heartbeats\/[^/]+\/beats/);
  // A VM set unhealthy, kept while ReplaceUnhealthy is suspended, shows why.
  await autoscaling(DEMO, { Action: 'SuspendProcesses', AutoScalingGroupName: group, 'ScalingProcesses.member.1': 'ReplaceUnhealthy' });
  await autoscaling(DEMO, { Action: 'SetDesiredCapacity', AutoScalingGroupName: group, DesiredCapacity: '1' });
  const vms = page.getByRole('table', { name: `Instances of ${group}` });
  const vm = await eventually(async () => {
    const id = await vms.locator('code').first().textContent().catch(() => null);
    const serving = id && (await vms.getByRole('cell', { name: 'InService', exact: true }).count()) === 1;
    return serving ? id : null;
  }, `a VM of ${group} InService`, 60_000);
  await autoscaling(DEMO, { Action: 'SetInstanceHealth', InstanceId: vm, HealthStatus: 'Unhealthy' });
  await vms.getByRole('cell', { name: 'a user health-check (the instance was set unhealthy)', exact: true }).waitFor({ timeout: WAIT });
  await done(page);
  await autoscaling(DEMO, { Action: 'DeleteAutoScalingGroup', AutoScalingGroupName: group, ForceDelete: 'true' });
});

test("a launch the cloud refuses shows the cloud's words in the activity", { timeout: 180_000 }, async () => {
  const lc = `bad${RUN}@hotel`;
  const group = `refused-${RUN}`;
  await autoscaling(DEMO, { Action: 'CreateLaunchConfiguration', LaunchConfigurationName: lc, ImageId: 'ami-00000000', InstanceType: 't2.micro' });
  await autoscaling(DEMO, { Action: 'CreateAutoScalingGroup', AutoScalingGroupName: group, LaunchConfigurationName: lc, MinSize: '1', MaxSize: '1' });
  const page = await newPage();
  await signedIn(page, DEMO, 'demo');
  await page.goto(`${CONSOLE}#/groups/${encodeURIComponent(group)}`);
  const failed = page
    .getByRole('table', { name: 'Activity' })
    .getByRole('row')
    .filter({ has: page.getByText('Failed', { exact: true }) })
    .first();
  await failed.waitFor({ timeout: WAIT });
  assert.match(await failed.locator('.status-message').textContent(), /ami-00000000|InvalidAMIID/);
  await done(page);
  await autoscaling(DEMO, { Action: 'DeleteAutoScalingGroup', AutoScalingGroupName: group, ForceDelete: 'true' });
});

test('an administrator registers a cloud and creates a user, who sees only their own groups', { timeout: 180_000 }, async () => {
  // demo has a group of its own the new user must not see.
  const demoGroup = `demo-only-${RUN}`;
  await autoscaling(DEMO, { Action: 'CreateLaunchConfiguration', LaunchConfigurationName: `only${RUN}@hotel`, ImageId: IMAGE, InstanceType: 't2.micro' });
  await autoscaling(DEMO, { Action: 'CreateAutoScalingGroup', AutoScalingGroupName: demoGroup, LaunchConfigurationName: `only${RUN}@hotel`, MinSize: '0', MaxSize: '1' });

  const page = await newPage();
  await signedIn(page, ADMIN, 'admin');
  const cloud = `tango${RUN}`;
  await go(page, 'Clouds');
  await page.getByRole('button', { name: 'Register cloud' }).click();
  const form = page.getByRole('dialog', { name: 'Register cloud' });
  await form.getByLabel('Cloud name').fill(cloud);
  await form.getByLabel('EC2 endpoint').fill(SIERRA);
  await form.getByLabel('Cloud region').fill('us-east-1');
  await form.getByRole('button', { name: 'Register' }).click();
  await succeeds(form, `registering ${cloud}`, () => form.waitFor({ state: 'detached' }));
  const clouds = page.getByRole('table', { name: 'Clouds' });
  const row = clouds.getByRole('row').filter({ has: page.getByRole('cell', { name: cloud, exact: true }) });
  await row.waitFor();
  assert.match(await row.textContent(), new RegExp(SIERRA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  await eventually(async () => (await row.getByRole('cell', { name: 'yes', exact: true }).count()) === 1, `${cloud} is reachable`, 30_000);
  await screenshot(page, 'admin-clouds');

  await go(page, 'Users');
  await page.getByRole('button', { name: 'Create user' }).click();
  const user = `carol${RUN}`;
  const create = page.getByRole('dialog', { name: 'Create user' });
  await create.getByLabel('User name').fill(user);
  await create.getByRole('button', { name: 'Create' }).click();
  const shown = page.getByRole('dialog', { name: `Access key of ${user}` });
  await succeeds(create, `creating ${user}`, () => shown.waitFor());
  const carol = {
    id: await shown.getByTestId('new-access-key-id').textContent(),
    secret: await shown.getByTestId('new-secret-access-key').textContent(),
  };
  assert.ok(carol.id && carol.secret.length >= 20, 'the new key and its secret are shown once');
  await shown.getByRole('button', { name: 'Done' }).click();
  const users = page.getByRole('table', { name: 'Users' });
  await users.getByRole('cell', { name: user, exact: true }).waitFor();
  assert.ok(!(await page.textContent('body')).includes(carol.secret), 'the secret is not shown again');

  // demo's groups at a glance.
  await users.getByRole('button', { name: 'Groups of demo' }).click();
  await page.getByRole('table', { name: 'Groups of demo' }).getByRole('cell', { name: demoGroup, exact: true }).waitFor();
  await screenshot(page, 'admin-users');

  // Phantom's own figures, from the local Prometheus, which scrapes them.
  await go(page, 'Operations');
  const requests = page.getByRole('figure', { name: 'Requests a second', exact: true });
  await eventually(async () => /^Requests a second: [0-9.]+ req\/s now$/.test(await requests.locator('figcaption').textContent()), 'the request rate is charted', 60_000);
  for (const name of ['Errors a second', 'Throttled a second', 'Request latency p99', 'Launches a minute', 'Failed launches a minute', 'Work queue depth', 'Work queue wait p99', 'Death to replacement p99']) {
    await page.getByRole('figure', { name, exact: true }).waitFor();
  }
  assert.equal(await requests.locator('canvas').count(), 1, 'the rate is drawn');
  await screenshot(page, 'admin-operations');
  await done(page);

  const theirs = await newPage();
  await signedIn(theirs, carol, user);
  await theirs.getByText('No groups yet.').waitFor();
  assert.equal(await theirs.getByRole('article').count(), 0, `${user} sees none of demo's groups`);
  assert.ok(!(await theirs.textContent('body')).includes(demoGroup));
  assert.equal(await theirs.getByRole('link', { name: 'Users' }).count(), 0, 'no admin pages for a user');
  await go(theirs, 'Credentials and keys');
  await theirs.getByRole('table', { name: 'Cloud credentials' }).getByRole('cell', { name: cloud, exact: true }).waitFor();
  await done(theirs);

  await autoscaling(DEMO, { Action: 'DeleteAutoScalingGroup', AutoScalingGroupName: demoGroup, ForceDelete: 'true' });
});

test("an administrator edits and removes a cloud, rotates a key, sets a user's limits and disables the user", { timeout: 120_000 }, async () => {
  const cloud = `uniform${RUN}`;
  const user = `dave${RUN}`;
  assert.equal((await phantom(ADMIN, 'PutCloud', { Name: cloud, Endpoint: HOTEL, Region: 'us-east-1', Events: true })).status, 200);
  assert.equal((await phantom(ADMIN, 'CreateUser', { UserName: user })).status, 200);
  const page = await newPage();
  await signedIn(page, ADMIN, 'admin');

  await go(page, 'Clouds');
  const row = page.getByRole('table', { name: 'Clouds' }).getByRole('row').filter({ has: page.getByRole('cell', { name: cloud, exact: true }) });
  await row.waitFor();
  await page.getByRole('button', { name: `Edit ${cloud}`, exact: true }).click();
  const edit = page.getByRole('dialog', { name: `Edit cloud ${cloud}` });
  assert.equal(await edit.getByLabel('EC2 endpoint').inputValue(), HOTEL, 'the form starts from the cloud as registered');
  assert.ok(await edit.getByLabel(/state changes/).isChecked(), 'it keeps that the cloud sends events');
  await edit.getByLabel('Zone').fill('us-east-1c');
  await edit.getByRole('button', { name: 'Save cloud' }).click();
  await succeeds(edit, `changing ${cloud}`, () => edit.waitFor({ state: 'detached' }));
  await row.getByRole('cell', { name: 'us-east-1c', exact: true }).waitFor();
  const saved = (await phantom(ADMIN, 'DescribeClouds')).body.Clouds.find((c) => c.Name === cloud);
  assert.equal(saved.Events, true, 'an edit keeps Events');
  assert.equal(saved.StatusChecks, true, 'a cloud is asked for status checks until it says it has none');
  await row.getByRole('cell', { name: 'DescribeInstanceStatus', exact: true }).waitFor();
  await page.getByRole('button', { name: `Remove ${cloud}`, exact: true }).click();
  const remove = page.getByRole('dialog', { name: `Remove cloud ${cloud}?` });
  await remove.getByRole('button', { name: 'Remove' }).click();
  await succeeds(remove, `removing ${cloud}`, () => remove.waitFor({ state: 'detached' }));
  await row.waitFor({ state: 'detached' });

  await go(page, 'Users');
  await page.getByRole('button', { name: `Rotate key of ${user}`, exact: true }).click();
  const shown = page.getByRole('dialog', { name: `New access key of ${user}` });
  await succeeds(page.getByRole('main'), `rotating ${user}'s key`, () => shown.waitFor());
  const rotated = {
    id: await shown.getByTestId('new-access-key-id').textContent(),
    secret: await shown.getByTestId('new-secret-access-key').textContent(),
  };
  await shown.getByRole('button', { name: 'Done' }).click();
  const users = page.getByRole('table', { name: 'Users' });
  const userRow = users.getByRole('row').filter({ has: page.getByRole('cell', { name: user, exact: true }) });
  await userRow.getByText(rotated.id, { exact: true }).waitFor();
  const theirs = await newPage();
  await signedIn(theirs, rotated, user);
  await done(theirs);

  await page.getByRole('button', { name: `Set limits of ${user}`, exact: true }).click();
  const limits = page.getByRole('dialog', { name: `Request limits of ${user}` });
  assert.equal(await limits.getByLabel('Describing calls a second').inputValue(), '20', "the form starts from the deployment's limits");
  await limits.getByLabel(/of its own/).check();
  await limits.getByLabel('Describing calls a second').fill('0');
  await limits.getByRole('button', { name: 'Save limits' }).click();
  await limits.getByRole('alert').getByText(/rate for describing must be/).waitFor();
  await limits.getByLabel('Describing calls a second').fill('2.5');
  await limits.getByLabel('Changing calls at once').fill('7');
  await limits.getByRole('button', { name: 'Save limits' }).click();
  await succeeds(limits, `setting ${user}'s limits`, () => limits.waitFor({ state: 'detached' }));
  await userRow.getByText('describe 2.5/s, burst 100; change 5/s, burst 7').waitFor();
  const listed = (await phantom(ADMIN, 'ListUsers')).body.Users.find((u) => u.UserName === user);
  assert.deepEqual(listed.Limits, { Describe: { Rate: 2.5, Burst: 100 }, Mutate: { Rate: 5, Burst: 7 }, Own: true });
  await page.getByRole('button', { name: `Set limits of ${user}`, exact: true }).click();
  await limits.getByLabel(/of its own/).uncheck();
  await limits.getByRole('button', { name: 'Save limits' }).click();
  await succeeds(limits, `giving ${user} the deployment's limits`, () => limits.waitFor({ state: 'detached' }));
  await userRow.getByText('(default)').waitFor();

  await page.getByRole('button', { name: `Disable ${user}`, exact: true }).click();
  const disable = page.getByRole('dialog', { name: `Disable ${user}?` });
  await disable.getByRole('button', { name: 'Disable' }).click();
  await succeeds(disable, `disabling ${user}`, () => disable.waitFor({ state: 'detached' }));
  await userRow.getByText('disabled', { exact: true }).waitFor();
  await done(page);
});

test('a group across two clouds shows where each VM runs', { timeout: 180_000 }, async () => {
  const page = await newPage();
  await signedIn(page, DEMO, 'demo');
  const lc = `multi${RUN}`;
  await createLaunchConfiguration(page, lc, { cloud: 'hotel' });
  await createLaunchConfiguration(page, lc, { cloud: 'sierra' });
  const group = `multi-${RUN}`;
  await go(page, 'Groups');
  await page.getByRole('button', { name: 'Create group' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create group' });
  await dialog.getByLabel('Name', { exact: true }).fill(group);
  await eventually(
    async () => (await dialog.getByLabel('Launch configuration').locator('option').allTextContents()).includes(`${lc}@hotel`),
    'the launch configuration picker offers both',
    30_000,
  );
  await dialog.getByLabel('Launch configuration').selectOption(`${lc}@hotel`);
  await dialog.getByLabel('Min size').fill('0');
  await dialog.getByLabel('Max size').fill('4');
  await dialog.getByLabel('Desired capacity').fill('3');
  await dialog.getByLabel('Clouds (phantom:clouds)').fill('hotel:1,sierra:3');
  await dialog.getByLabel('Policy (phantom:policy)').selectOption('overflow');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await succeeds(dialog, `creating group ${group}`, () => dialog.waitFor({ state: 'detached' }));
  const card = page.getByRole('article', { name: `Group ${group}` });
  await eventually(async () => (await shownInstances(card)).inService === 3, 'three VMs InService across the clouds');
  assert.equal(await card.getByRole('cell', { name: 'hotel', exact: true }).count(), 1, 'hotel holds its one');
  assert.equal(await card.getByRole('cell', { name: 'sierra', exact: true }).count(), 2, 'sierra takes the rest');
  await card.getByText('hotel:1,sierra:3', { exact: true }).waitFor();
  await screenshot(page, 'groups-across-clouds');
  await autoscaling(DEMO, { Action: 'DeleteAutoScalingGroup', AutoScalingGroupName: group, ForceDelete: 'true' });
  await done(page);
});

test('credentials per cloud: set, shown by access key id only, removed; an SSH key imported per cloud', async () => {
  const page = await newPage();
  await signedIn(page, DEMO, 'demo');
  await go(page, 'Credentials and keys');
  const table = page.getByRole('table', { name: 'Cloud credentials' });
  await table.getByRole('cell', { name: 'hotel', exact: true }).waitFor();
  await screenshot(page, 'credentials');

  // demo's sierra credentials are replaced, then set back as they were (moto takes any).
  const sierra = table.getByRole('row').filter({ has: page.getByRole('cell', { name: 'sierra', exact: true }) });
  const original = await sierra.locator('td[data-label="Access key ID"]').textContent();
  const secret = `cloud-secret-${RUN}`;
  await page.getByRole('button', { name: 'Set credentials for sierra' }).click();
  const dialog = page.getByRole('dialog', { name: 'Credentials for sierra' });
  await dialog.getByLabel('Cloud access key ID').fill(`AKIA${RUN}`);
  await dialog.getByLabel('Cloud secret access key').fill(secret);
  await dialog.getByRole('button', { name: 'Save credentials' }).click();
  await succeeds(dialog, 'saving credentials', () => dialog.waitFor({ state: 'detached' }));
  await sierra.getByText(`AKIA${RUN}`).waitFor();
  assert.ok(!(await page.textContent('body')).includes(secret), 'the cloud secret is never shown back');

  const key = sshPublicKey(`test@${RUN}`);
  await page.getByLabel('Key name').fill(`laptop-${RUN}`);
  await page.getByLabel('Public key').fill(key);
  await page.getByRole('button', { name: 'Import key' }).click();
  const results = page.getByRole('table', { name: 'Key import results' });
  await succeeds(page.getByRole('form', { name: 'SSH key' }), 'importing the key', () => results.waitFor());
  for (const cloud of ['hotel', 'sierra']) {
    const row = results.getByRole('row').filter({ has: page.getByRole('cell', { name: cloud, exact: true }) });
    await row.waitFor();
    assert.match(await row.textContent(), new RegExp(`Imported laptop-${RUN}`), `the key reached ${cloud}`);
  }

  await page.getByRole('button', { name: 'Remove credentials for sierra' }).click();
  const confirm = page.getByRole('dialog', { name: 'Remove your credentials for sierra?' });
  await confirm.getByRole('button', { name: 'Remove' }).click();
  await confirm.waitFor({ state: 'detached' });
  await sierra.getByText('none', { exact: true }).waitFor();

  await page.getByRole('button', { name: 'Set credentials for sierra' }).click();
  await dialog.getByLabel('Cloud access key ID').fill(original);
  await dialog.getByLabel('Cloud secret access key').fill('cloud-secret');
  await dialog.getByRole('button', { name: 'Save credentials' }).click();
  await dialog.waitFor({ state: 'detached' });
  await sierra.getByText(original, { exact: true }).waitFor();
  await done(page);
});

test("a target tracking policy's metric charted against its target, with the scaling it caused", { timeout: 150_000 }, async () => {
  // An exporter of this test's own, listed for the stack's Prometheus (file_sd): one gauge a VM.
  const load = new Map();
  const server = createServer((_, res) => {
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end([...load].map(([id, v]) => `app_load{instance_id="${id}"} ${v}\n`).join(''));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const target = join(need('PHANTOM_PROMETHEUS_TARGETS'), `console-${RUN}.json`);
  writeFileSync(target, JSON.stringify([{ targets: [`127.0.0.1:${server.address().port}`], labels: { job: 'console' } }]));
  try {
    const lc = `track${RUN}@hotel`;
    const group = `track-${RUN}`;
    await autoscaling(DEMO, { Action: 'CreateLaunchConfiguration', LaunchConfigurationName: lc, ImageId: IMAGE, InstanceType: 't2.micro' });
    await autoscaling(DEMO, { Action: 'CreateAutoScalingGroup', AutoScalingGroupName: group, LaunchConfigurationName: lc, MinSize: '1', MaxSize: '4', DesiredCapacity: '1' });
    const ids = async () => {
      const xml = await autoscaling(DEMO, { Action: 'DescribeAutoScalingGroups', 'AutoScalingGroupNames.member.1': group });
      return [...xml.matchAll(/<InstanceId>([^<]+)<\/InstanceId>/g)].map((m) => m[1]);
    };
    const publish = async (value) => {
      for (const id of await ids()) load.set(id, value);
    };
    await eventually(async () => (await ids()).length === 1, 'the group has its VM');
    await publish(20);
    const tt = 'TargetTrackingConfiguration.';
    await autoscaling(DEMO, {
      Action: 'PutScalingPolicy',
      AutoScalingGroupName: group,
      PolicyName: 'load50',
      PolicyType: 'TargetTrackingScaling',
      EstimatedInstanceWarmup: '5',
      [`${tt}TargetValue`]: '50',
      [`${tt}CustomizedMetricSpecification.Metrics.member.1.Id`]: 'load',
      [`${tt}CustomizedMetricSpecification.Metrics.member.1.Expression`]: 'avg(app_load{$instances})',
    });
    const page = await newPage();
    await signedIn(page, DEMO, 'demo');
    await page.goto(`${CONSOLE}#/groups/${encodeURIComponent(group)}`);
    const chart = page.locator('figure.metric-chart');
    await chart.waitFor();
    assert.match(await chart.locator('figcaption').textContent(), /load50: .* against its target 50/);
    assert.equal(await chart.locator('li.level.target').getAttribute('data-value'), '50');
    // The metric comes in (the chart refreshes every 15 s), then goes above: the group grows and
    // the chart marks the scale-out.
    await eventually(async () => /now 20 against/.test(await chart.locator('figcaption').textContent()), 'the chart shows the metric', 60_000);
    await publish(80);
    await eventually(async () => /<DesiredCapacity>2<\/DesiredCapacity>/.test(await autoscaling(DEMO, { Action: 'DescribeAutoScalingGroups', 'AutoScalingGroupNames.member.1': group })), 'the group grew', 60_000);
    await publish(50);
    await eventually(async () => (await chart.locator('li.mark.change.out').count()) === 1, 'the chart marks the scale-out', 60_000);
    assert.match(await chart.locator('figcaption').textContent(), /1 scaling change in the last hour/);
    assert.match((await latestUnderCursor(page, chart, 'load50')).value, /^\d/, 'the cursor shows the metric');
    await chart.scrollIntoViewIfNeeded();
    await screenshot(page, 'group-metric');

    // Its alarms: the policy's two, and one of CloudWatch on a metric the VMs publish, charted
    // against its threshold.
    const dims = [{ Name: 'AutoScalingGroupName', Value: group }];
    await cloudwatch(DEMO, 'PutMetricData', { Namespace: 'App', MetricData: [{ MetricName: 'Queue', Dimensions: dims, Value: 7 }] });
    await cloudwatch(DEMO, 'PutMetricAlarm', {
      AlarmName: `queue-${RUN}`, Namespace: 'App', MetricName: 'Queue', Dimensions: dims, Statistic: 'Average',
      Period: 60, EvaluationPeriods: 1, Threshold: 5, ComparisonOperator: 'GreaterThanThreshold',
    });
    await page.reload();
    const alarms = page.locator('table[aria-labelledby="alarms-title"]');
    await alarms.waitFor();
    await eventually(async () => (await alarms.locator('tbody tr').count()) === 3, 'the group shows its three alarms', 60_000);
    const names = await alarms.locator('tbody tr td.name').allTextContents();
    assert.equal(names.filter((n) => n.startsWith(`TargetTracking-${group}-Alarm`)).length, 2, names.join(', '));
    assert.ok(names.includes(`queue-${RUN}`), names.join(', '));
    assert.match(await alarms.textContent(), /PromQL avg\(app_load/);
    assert.match(await alarms.textContent(), /> 50 for 3 of 3 periods of 60 s/);
    const alarmChart = page.locator('figure.alarm-chart');
    await alarmChart.waitFor();
    assert.match(await alarmChart.locator('figcaption').textContent(), new RegExp(`queue-${RUN}: \\w+; now 7 against its threshold 5`));
    assert.equal(await alarmChart.locator('li.level.target').getAttribute('data-value'), '5');
    await alarmChart.scrollIntoViewIfNeeded();
    await screenshot(page, 'group-alarms');
    await done(page);
  } finally {
    rmSync(target, { force: true });
    server.close();
  }
});

test("an IAM user made in Access signs in with its own key, is refused what its policy does not allow, and the trail shows both", { timeout: 120_000 }, async () => {
  const page = await newPage();
  await signedIn(page, DEMO, 'demo');
  await go(page, 'Access');
  const name = `ci-${RUN}`;
  await page.getByRole('button', { name: 'Create IAM user' }).click();
  const create = page.getByRole('dialog', { name: 'Create IAM user' });
  await create.getByLabel('User name').fill(name);
  await create.getByRole('button', { name: 'Create' }).click();
  await succeeds(create, 'creating the IAM user', () => create.waitFor({ state: 'detached' }));
  const users = page.getByRole('table', { name: 'IAM users' });
  await users.getByRole('cell', { name, exact: true }).waitFor();
  await page.getByRole('button', { name: `Manage ${name}` }).click();
  await page.getByRole('button', { name: 'Put policy' }).click();
  const put = page.getByRole('dialog', { name: `Put a policy on ${name}` });
  await put.getByLabel('Policy name').fill('read');
  await put
    .getByLabel('Policy document')
    .fill('{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"autoscaling:Describe*","Resource":"*"}}');
  await put.getByRole('button', { name: 'Put policy' }).click();
  await succeeds(put, 'putting the policy', () => put.waitFor({ state: 'detached' }));
  await page.getByRole('list', { name: `Policies of ${name}` }).getByText('read').waitFor();
  await page.getByRole('button', { name: 'Create access key' }).click();
  const shown = page.getByRole('status').filter({ hasText: 'shown this once' });
  await shown.waitFor();
  const [id, secret] = await shown.locator('code').allTextContents();
  await screenshot(page, 'access');
  await done(page);

  // The IAM user signs in with its own key: its policy lets it read groups, not IAM.
  const own = await newPage();
  await signIn(own, { id, secret });
  await own.getByText(`:user/${name}`).first().waitFor();
  await go(own, 'Access');
  await own.getByText('AccessDenied').first().waitFor();
  assert.match(await own.textContent('main'), new RegExp(`user/${name} is not authorized to perform: iam:ListUsers`));
  await done(own);

  // The account's trail: the user's making, and the refusal.
  const trail = await newPage();
  await signedIn(trail, DEMO, 'demo');
  await go(trail, 'Trail');
  const events = trail.getByRole('table', { name: 'Events' });
  await eventually(async () => {
    const text = await events.textContent();
    return text.includes('CreateUser') && text.includes('AccessDenied') && text.includes('ListUsers');
  }, 'the trail shows the IAM user made and its refused request');
  await screenshot(trail, 'trail');
  await done(trail);
});
