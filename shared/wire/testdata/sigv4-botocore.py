#!/usr/bin/env python3
"""Computes sigv4-botocore.sig, the signature src/sigv4.rs's tests expect, with botocore's own signer."""
import datetime
from unittest import mock
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

req = AWSRequest(method="POST", url="http://127.0.0.1:4566/",
                 data="Action=DescribeAutoScalingGroups&Version=2011-01-01",
                 headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
creds = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
with mock.patch("botocore.auth.get_current_datetime", return_value=datetime.datetime(2015, 8, 30, 12, 36, 0)):
    SigV4Auth(creds, "autoscaling", "us-east-1").add_auth(req)
assert req.headers["X-Amz-Date"] == "20150830T123600Z"
auth = req.headers["Authorization"]
assert "SignedHeaders=content-type;host;x-amz-date" in auth, auth
print(auth.split("Signature=")[1])
