// tests/hil/view/foxglove_schema.mjs: the rules by which Foxglove Studio and Lichtblick turn a
// `json` channel's JSON Schema into a topic (their parseJsonSchema, packages/mcap-support; the
// same in both, read from their sources and written here), and a check that a message has the
// shape its schema declares. A schema these rules refuse is shown as "Failed to parse channel
// schema" and the topic is lost.
//
// The rules, per property of an object schema:
//   - the object's "type" is "object" (the root too), and it has "properties" (Lichtblick and
//     Foxglove since late 2023 tolerate an object without them; older Foxglove releases throw);
//   - a property with "oneOf" is taken only when every alternative has a numeric "const";
//   - otherwise its "type" is one string: boolean, string (with no contentEncoding, or base64),
//     number, integer, object (its properties checked the same way) or array; anything else
//     ("null", a list such as ["number", "null"], no type) is refused;
//   - an array has "items" whose "type" is boolean, string (no contentEncoding), number,
//     integer or object (checked the same way): no arrays of arrays.
// parse() returns {ok, errors, fields}: fields maps each message path Foxglove's Plot offers
// ("values.angle") to its datatype (float64, int32, uint32, string, bool, nested).

function fieldsOf(schema, path, out, errors) {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    errors.push(`${path || "(root)"}: a schema must be an object`);
    return;
  }
  if (schema.type !== "object") {
    errors.push(`${path || "(root)"}: expected "type": "object", got ${JSON.stringify(schema.type)}`);
    return;
  }
  if (schema.properties === undefined) {
    errors.push(`${path || "(root)"}: an object needs "properties" (older Foxglove releases throw without them)`);
    return;
  }
  for (const [name, field] of Object.entries(schema.properties)) {
    const at = path ? `${path}.${name}` : name;
    if (field === null || typeof field !== "object") {
      errors.push(`${at}: a property's schema must be an object`);
      continue;
    }
    if (Array.isArray(field.oneOf)) {
      if (field.oneOf.every((alt) => typeof alt.const === "number")) out.set(at, "uint32");
      else errors.push(`${at}: oneOf alternatives must have number values`);
      continue;
    }
    const integer = (s) => ((typeof s.minimum === "number" && s.minimum >= 0) ||
      (typeof s.exclusiveMinimum === "number" && s.exclusiveMinimum >= 0) ? "uint32" : "int32");
    switch (field.type) {
      case "boolean": out.set(at, "bool"); break;
      case "string":
        if (field.contentEncoding !== undefined && field.contentEncoding !== "base64") {
          errors.push(`${at}: unsupported contentEncoding ${JSON.stringify(field.contentEncoding)}`);
        } else out.set(at, field.contentEncoding === "base64" ? "uint8[]" : "string");
        break;
      case "number": out.set(at, "float64"); break;
      case "integer": out.set(at, integer(field)); break;
      case "object": out.set(at, "nested"); fieldsOf(field, at, out, errors); break;
      case "array": {
        const item = field.items;
        if (item === null || typeof item !== "object") { errors.push(`${at}: an array needs "items"`); break; }
        switch (item.type) {
          case "boolean": out.set(at, "bool[]"); break;
          case "string":
            if (item.contentEncoding !== undefined) errors.push(`${at}: unsupported contentEncoding for array items`);
            else out.set(at, "string[]");
            break;
          case "number": out.set(at, "float64[]"); break;
          case "integer": out.set(at, `${integer(item)}[]`); break;
          case "object": out.set(at, "nested[]"); fieldsOf(item, `${at}[]`, out, errors); break;
          default: errors.push(`${at}: unsupported type ${JSON.stringify(item.type)} for array items`);
        }
        break;
      }
      default:
        errors.push(`${at}: unsupported type ${JSON.stringify(field.type)}`);
    }
  }
}

// The channel's schema (text, as advertised) under the apps' rules.
export function parse(schemaText) {
  const errors = [], fields = new Map();
  let schema;
  try {
    schema = JSON.parse(schemaText);
  } catch (e) {
    return { ok: false, errors: [`not JSON: ${e.message}`], fields };
  }
  fieldsOf(schema, "", fields, errors);
  return { ok: errors.length === 0, errors, fields };
}

// Where a message (parsed JSON) differs from its schema: a key the schema does not declare, or a
// value whose JSON type is not the declared one (null is never a number). Returns the problems.
export function conforms(schema, value, path = "", problems = []) {
  const at = path || "(root)";
  const type = schema && schema.type;
  const kind = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  const fits = { number: kind === "number", integer: Number.isInteger(value), string: kind === "string",
    boolean: kind === "boolean", object: kind === "object", array: kind === "array" }[type];
  if (!fits) {
    problems.push(`${at}: ${JSON.stringify(value)?.slice(0, 60)} is not of type ${JSON.stringify(type)}`);
    return problems;
  }
  if (type === "object") {
    for (const [k, v] of Object.entries(value)) {
      const sub = schema.properties && schema.properties[k];
      if (!sub) problems.push(`${path ? `${path}.` : ""}${k}: not declared by the schema`);
      else conforms(sub, v, path ? `${path}.${k}` : k, problems);
    }
  } else if (type === "array") {
    value.forEach((v, i) => conforms(schema.items, v, `${at}[${i}]`, problems));
  }
  return problems;
}
