"""Reads a CloudFormation/SAM template, short-form tags (!Ref, !Sub, !GetAtt ...) included.
Shared by localstack/bootstrap.py and infra/check_template.py."""
import yaml


class CfnLoader(yaml.SafeLoader):
    """Reads CloudFormation's short-form tags as {"Fn::X": value} (or {"Ref": value})."""


def _tag(loader, suffix, node):
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    return {name: value}


CfnLoader.add_multi_constructor("!", _tag)


def load(path):
    with open(path) as f:
        return yaml.load(f, Loader=CfnLoader)
