#!/usr/bin/env python3
"""Print template.yaml after the SAM transform, as CloudFormation JSON.

Uses the SAM translator that ships with cfn-lint, through cfn-lint's own transform code,
so no AWS credentials or SAM CLI are needed:  python3 infra/scripts/sam-translate.py template.yaml
"""
import json
import sys

from cfnlint.decode import decode
from cfnlint.template.transforms._sam import Transform

tpl, matches = decode(sys.argv[1] if len(sys.argv) > 1 else "template.yaml")
if matches:
    sys.exit("\n".join(str(m) for m in matches))
out = Transform(sys.argv[1] if len(sys.argv) > 1 else "template.yaml", tpl, "us-east-1")
res = out.transform_template()
if res:
    sys.exit("\n".join(str(m) for m in res))
json.dump(out._template, sys.stdout, indent=1, default=str)
