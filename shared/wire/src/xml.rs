//! The AWS Query protocol, outbound: responses and errors as XML, written with quick-xml by walking
//! the operation's output shape over a JSON document.

use crate::error::ApiError;
use crate::query::Document;
use crate::shapes::{self, Service, Shape};
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use serde_json::Value;
use std::io::Cursor;

type W = Writer<Cursor<Vec<u8>>>;

/// `<{Action}Response><{Action}Result>…</{Action}Result><ResponseMetadata>…` (no Result element for
/// actions without output).
pub fn response(operation: &str, result: Option<&Document>, request_id: &str) -> String {
    response_of(Service::AutoScaling, operation, result, request_id)
}

/// `response` for an operation of `service`.
pub fn response_of(
    service: Service,
    operation: &str,
    result: Option<&Document>,
    request_id: &str,
) -> String {
    let mut w = Writer::new(Cursor::new(Vec::new()));
    decl(&mut w);
    let root = format!("{operation}Response");
    start(&mut w, &root, Some(service));
    let output = service
        .model()
        .operations
        .get(operation)
        .and_then(|op| op.output.as_ref());
    // An action with an output shape always has its Result element, empty when there is nothing
    // to say (SetInstanceProtection): botocore refuses the answer without it.
    let empty = Value::Object(Default::default());
    if let Some(out) = output {
        let value = result.map_or(&empty, |d| &d.0);
        let wrapper = out
            .result_wrapper
            .clone()
            .unwrap_or_else(|| format!("{operation}Result"));
        start(&mut w, &wrapper, None);
        render_members(&mut w, service, &out.shape, value);
        end(&mut w, &wrapper);
    }
    start(&mut w, "ResponseMetadata", None);
    text_element(&mut w, "RequestId", request_id);
    end(&mut w, "ResponseMetadata");
    end(&mut w, &root);
    into_string(w)
}

/// `<ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>`
pub fn error_response(err: &ApiError, request_id: &str) -> String {
    error_response_of(Service::AutoScaling, err, request_id)
}

/// `error_response` in `service`'s namespace.
pub fn error_response_of(service: Service, err: &ApiError, request_id: &str) -> String {
    let mut w = Writer::new(Cursor::new(Vec::new()));
    decl(&mut w);
    start(&mut w, "ErrorResponse", Some(service));
    start(&mut w, "Error", None);
    text_element(&mut w, "Type", err.fault_type());
    text_element(&mut w, "Code", err.code);
    text_element(&mut w, "Message", &err.message);
    end(&mut w, "Error");
    text_element(&mut w, "RequestId", request_id);
    end(&mut w, "ErrorResponse");
    into_string(w)
}

fn render_members(w: &mut W, service: Service, shape_name: &str, value: &Value) {
    let Some(obj) = value.as_object() else { return };
    for (wire, target) in service.members(shape_name) {
        if let Some(v) = obj.get(wire).filter(|v| !v.is_null()) {
            render(w, service, wire, target, v);
        }
    }
}

fn render(w: &mut W, service: Service, name: &str, shape_name: &str, value: &Value) {
    match service.shape(shape_name) {
        Shape::Structure { .. } => {
            start(w, name, None);
            render_members(w, service, shape_name, value);
            end(w, name);
        }
        Shape::List { member, .. } => {
            start(w, name, None);
            for item in value.as_array().into_iter().flatten() {
                render(
                    w,
                    service,
                    shapes::list_member_name(member),
                    &member.shape,
                    item,
                );
            }
            end(w, name);
        }
        Shape::Map { key, value: v, .. } => {
            start(w, name, None);
            for (k, item) in value.as_object().into_iter().flatten() {
                start(w, "entry", None);
                render(w, service, "key", &key.shape, &Value::String(k.clone()));
                render(w, service, "value", &v.shape, item);
                end(w, "entry");
            }
            end(w, name);
        }
        _ => {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            text_element(w, name, &text);
        }
    }
}

fn decl(w: &mut W) {
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .expect("writing to memory");
}

/// An element, with the service's namespace on the root.
fn start(w: &mut W, name: &str, namespace_of: Option<Service>) {
    let mut el = BytesStart::new(name);
    if let Some(service) = namespace_of {
        el.push_attribute(("xmlns", service.xml_namespace()));
    }
    w.write_event(Event::Start(el)).expect("writing to memory");
}

fn end(w: &mut W, name: &str) {
    w.write_event(Event::End(BytesEnd::new(name)))
        .expect("writing to memory");
}

fn text_element(w: &mut W, name: &str, text: &str) {
    start(w, name, None);
    w.write_event(Event::Text(BytesText::from_escaped(escape(text))))
        .expect("writing to memory");
    end(w, name);
}

/// Escapes markup and also CR, which an XML parser would otherwise fold into LF on the way back.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
    out
}

fn into_string(w: W) -> String {
    String::from_utf8(w.into_inner().into_inner()).expect("quick-xml writes UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn action_without_output_has_no_result() {
        let x = response("SetDesiredCapacity", None, "rid");
        assert_eq!(
            x,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><SetDesiredCapacityResponse xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\"><ResponseMetadata><RequestId>rid</RequestId></ResponseMetadata></SetDesiredCapacityResponse>"
        );
    }

    #[test]
    fn renders_lists_structures_and_escapes() {
        let doc = json!({
            "LaunchConfigurations": [{
                "LaunchConfigurationName": "a<b>&c\r\n",
                "SecurityGroups": ["sg-1", "sg-2"],
                "InstanceMonitoring": {"Enabled": true},
                "BlockDeviceMappings": [{"DeviceName": "/dev/sda1", "Ebs": {"VolumeSize": 8}}],
                "NotInModel": "dropped"
            }],
            "NextToken": "t"
        });
        let x = response("DescribeLaunchConfigurations", Some(&Document(doc)), "rid");
        assert!(x.contains("<DescribeLaunchConfigurationsResult><LaunchConfigurations><member><LaunchConfigurationName>a&lt;b&gt;&amp;c&#xD;\n</LaunchConfigurationName>"), "{x}");
        assert!(x.contains(
            "<SecurityGroups><member>sg-1</member><member>sg-2</member></SecurityGroups>"
        ));
        assert!(x.contains("<InstanceMonitoring><Enabled>true</Enabled></InstanceMonitoring>"));
        assert!(x.contains("<Ebs><VolumeSize>8</VolumeSize></Ebs>"));
        assert!(x.contains(
            "</LaunchConfigurations><NextToken>t</NextToken></DescribeLaunchConfigurationsResult>"
        ));
        assert!(!x.contains("dropped"));
    }

    #[test]
    fn error_document() {
        let x = error_response(&ApiError::validation("bad <thing>"), "rid");
        assert!(x.contains("<Error><Type>Sender</Type><Code>ValidationError</Code><Message>bad &lt;thing&gt;</Message></Error><RequestId>rid</RequestId>"), "{x}");
    }
}
