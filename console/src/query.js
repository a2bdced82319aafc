// AWS's Query protocol, both ways: a form body from nested parameters, and an XML answer read into
// plain objects (DOMParser; text is only ever read as text).

/**
 * `{Action, Tags: [{Key, Value}], MinSize: 1}` -> `Action=..&Tags.member.1.Key=..&MinSize=1`:
 * lists become `.member.N` (1-based), structures `.Field`; undefined, null and "" are left out.
 */
export function queryBody(params) {
  const form = new URLSearchParams();
  const add = (prefix, value) => {
    if (value === undefined || value === null || value === '') return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => add(`${prefix}.member.${i + 1}`, item));
    } else if (typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) add(`${prefix}.${key}`, item);
    } else {
      form.append(prefix, String(value));
    }
  };
  for (const [key, value] of Object.entries(params)) add(key, value);
  return form.toString();
}

/**
 * An element as a value: text for a leaf, an array for a list of <member>s, else an object of its
 * children by name. An empty list is an empty leaf, so "" (read lists with api.js's list()).
 */
export function elementValue(element) {
  const children = Array.from(element.children);
  if (children.length === 0) return element.textContent;
  if (children.every((child) => child.localName === 'member')) return children.map(elementValue);
  const value = {};
  for (const child of children) value[child.localName] = elementValue(child);
  return value;
}

/** `{result}` from `<ActionResponse><ActionResult>`, or `{error: {Code, Message, RequestId}}`. */
export function readQueryAnswer(text, action) {
  const doc = new DOMParser().parseFromString(text, 'application/xml');
  const root = doc.documentElement;
  if (!root || doc.getElementsByTagName('parsererror').length > 0) return { result: {} };
  if (root.localName === 'ErrorResponse') {
    const error = root.getElementsByTagName('Error')[0];
    const field = (name) => error?.getElementsByTagName(name)[0]?.textContent || '';
    const requestId = root.getElementsByTagName('RequestId')[0]?.textContent || '';
    return { error: { Code: field('Code') || 'UnknownError', Message: field('Message'), RequestId: requestId } };
  }
  const result = Array.from(root.children).find((child) => child.localName === `${action}Result`);
  return { result: result ? elementValue(result) || {} : {} };
}
