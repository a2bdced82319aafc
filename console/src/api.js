// The two APIs the console calls, both on the page's own origin and both SigV4-signed in the
// browser (service `autoscaling`) with the signed-in user's key: AWS Auto Scaling's Query API
// (form body, XML answers) and Phantom's own JSON API (POST <base>/phantom/v1/<Operation>).
// The secret is used here to sign and is never sent.
import { AwsClient } from 'aws4fetch';
import { queryBody, readQueryAnswer } from './query.js';

export const VERSION = '2011-01-01';

/** An error as the API gave it (Code and Message), or as the browser met it (NetworkError). */
export class ApiError extends Error {
  constructor(code, message, status = 0, requestId = '') {
    super(message);
    this.code = code;
    this.status = status;
    this.requestId = requestId;
  }
}

/** Where the API is: the page's address up to `/console/` (`/Prod` behind API Gateway). */
export function apiBase(location = window.location) {
  const path = location.pathname;
  const at = path.lastIndexOf('/console');
  return location.origin + (at >= 0 ? path.slice(0, at) : '');
}

export function client({ accessKeyId, secretAccessKey, region }) {
  const signerFor = (service) =>
    new AwsClient({
      accessKeyId,
      secretAccessKey,
      service,
      region,
      // Errors are shown as they are; a retry loop would hide a refusal behind a long wait.
      retries: 0,
    });
  const signer = signerFor('autoscaling');
  // CloudWatch, IAM and CloudTrail at Phantom's endpoint are signed for their own services,
  // as the AWS CLI signs them.
  const monitoring = signerFor('monitoring');
  const iamSigner = signerFor('iam');
  const trailSigner = signerFor('cloudtrail');
  const base = apiBase();

  async function send(url, contentType, body, headers = {}, by = signer) {
    try {
      return await by.fetch(url, {
        method: 'POST',
        headers: { 'content-type': contentType, ...headers },
        body,
      });
    } catch (e) {
      throw new ApiError('NetworkError', `The API could not be reached: ${e.message}`);
    }
  }

  /** An action of a Query API (`version`), signed by `by`: its Result element. */
  async function queryOf(version, by, action, params) {
    const body = queryBody({ Action: action, Version: version, ...params });
    const response = await send(`${base}/`, 'application/x-www-form-urlencoded; charset=utf-8', body, {}, by);
    const text = await response.text();
    const answer = readQueryAnswer(text, action);
    if (answer.error || !response.ok) {
      const e = answer.error || { Code: `HTTP${response.status}`, Message: text.slice(0, 300) };
      throw new ApiError(e.Code, e.Message, response.status, e.RequestId);
    }
    return answer.result;
  }

  /** An operation of a JSON API (`x-amz-json-<version>`, its `target`), signed by `by`. */
  async function jsonOf(version, target, by, input) {
    const response = await send(`${base}/`, `application/x-amz-json-${version}`, JSON.stringify(input), { 'x-amz-target': target }, by);
    const { text, answer } = await readJson(response);
    if (!response.ok) {
      const code = String(answer.__type || `HTTP${response.status}`).split('#').pop();
      throw new ApiError(code, answer.message || answer.Message || text.slice(0, 300), response.status);
    }
    return answer;
  }

  return {
    /** An Auto Scaling action: its Result element as plain objects (see query.js). */
    query(action, params = {}) {
      return queryOf(VERSION, signer, action, params);
    },

    /** A CloudWatch action at Phantom's endpoint, in CloudWatch's JSON protocol (as the AWS CLI
     * sends it): its JSON answer; timestamps are seconds since 1970. */
    cloudwatch(operation, input = {}) {
      return jsonOf('1.0', `GraniteServiceVersion20100801.${operation}`, monitoring, input);
    },

    /** An IAM action at Phantom's endpoint (the Query protocol): its Result element. */
    iam(action, params = {}) {
      return queryOf('2010-05-08', iamSigner, action, params);
    },

    /** CloudTrail's LookupEvents (JSON 1.1): the account's trail, newest first. */
    lookupEvents(input = {}) {
      return jsonOf('1.1', 'com.amazonaws.cloudtrail.v20131101.CloudTrail_20131101.LookupEvents', trailSigner, input);
    },

    /** One of Phantom's own operations: its JSON answer. */
    async phantom(operation, input = {}) {
      const response = await send(
        `${base}/phantom/v1/${operation}`,
        'application/json',
        JSON.stringify(input),
      );
      const { text, answer } = await readJson(response);
      if (!response.ok || answer.Error) {
        const e = answer.Error || { Code: `HTTP${response.status}`, Message: text.slice(0, 300) };
        throw new ApiError(e.Code, e.Message, response.status, answer.RequestId);
      }
      return answer;
    },
  };
}

/** A JSON answer's text and value; one that is not JSON is an error with what it says. */
async function readJson(response) {
  const text = await response.text();
  try {
    return { text, answer: text ? JSON.parse(text) : {} };
  } catch {
    throw new ApiError(`HTTP${response.status}`, text.slice(0, 300) || response.statusText, response.status);
  }
}

/** Every page of a Describe action: the items of `listName` across NextTokens. */
export async function queryAll(api, action, params, listName) {
  const items = [];
  let token;
  do {
    const result = await api.query(action, token ? { ...params, NextToken: token } : params);
    items.push(...list(result[listName]));
    token = result.NextToken;
  } while (token);
  return items;
}

/** A list from an answer: an empty element (`<Instances/>`) reads as "", so as []. */
export function list(value) {
  return Array.isArray(value) ? value : [];
}
