package check

// The stack created for real in moto_server's CloudFormation: template.yaml after the SAM
// transform (infra/scripts/sam-translate.py) and the CDK app's synthesized template, each
// with the resource types moto cannot create taken out (motoUnsupported), then asserted
// through the services' own APIs (EC2, Lambda, KMS, S3, EventBridge, RDS).

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/gateway/shared/testpeer"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// motoUnsupported is every resource type of the two templates that moto_server (5.2.1, the
// version of this project's machines) does not create, with the reason. Except for
// Custom::, moto's CloudFormation has no model for them: it accepts them silently (a warning
// in its log, the stack still CREATE_COMPLETE) and creates nothing, and a GetAtt of one in
// the Outputs makes CreateStack fail with a 500. TestMotoStack takes them out of the
// templates; TestMotoUnsupportedTypes checks that each is still not created (so a moto
// upgrade that models one fails there: move it out of this table and assert on it) and
// that each still occurs in a template. infra/README.md lists the same.
var motoUnsupported = map[string]string{
	"AWS::ApiGatewayV2::Api":                      "no CloudFormation model (moto has the API Gateway v2 API, not its CloudFormation resources)",
	"AWS::ApiGatewayV2::Stage":                    "no CloudFormation model",
	"AWS::ApiGatewayV2::Route":                    "no CloudFormation model",
	"AWS::ApiGatewayV2::Integration":              "no CloudFormation model",
	"AWS::ApiGatewayV2::DomainName":               "no CloudFormation model",
	"AWS::ApiGatewayV2::ApiMapping":               "no CloudFormation model",
	"AWS::CloudWatch::Alarm":                      "no CloudFormation model (AWS::CloudWatch::Dashboard has one)",
	"AWS::EC2::SecurityGroupEgress":               "no CloudFormation model (AWS::EC2::SecurityGroupIngress has one)",
	"AWS::Lambda::Alias":                          "no CloudFormation model",
	"AWS::Lambda::EventInvokeConfig":              "no CloudFormation model",
	"AWS::RDS::DBProxy":                           "no CloudFormation model (moto has the RDS Proxy API only)",
	"AWS::RDS::DBProxyTargetGroup":                "no CloudFormation model",
	"AWS::S3::BucketPolicy":                       "no CloudFormation model",
	"AWS::SNS::Subscription":                      "no CloudFormation model (AWS::SNS::Topic has one)",
	"AWS::SecretsManager::Secret":                 "no CloudFormation model (moto has the Secrets Manager API only)",
	"AWS::SecretsManager::SecretTargetAttachment": "no CloudFormation model",
	"Custom::DatabaseMigration": "moto sends a Custom:: resource to its ServiceToken function, which " +
		"moto runs only in Docker (absent here); the function itself is checked under the Lambda " +
		"runtime emulator (TestMigrationFunctionUnderEmulator)",
}

// strippedPrefix starts the value that stands in for a Ref or GetAtt of a resource taken out
// for moto: ARN-shaped, because moto checks the ARNs of IAM policies.
const strippedPrefix = "arn:aws:stripped:us-east-1:123456789012:"

// stripped is the stand-in for {Ref: id} (attr "") or {Fn::GetAtt: [id, attr]}.
func stripped(id, attr string) string {
	if attr == "" {
		return strippedPrefix + id
	}
	return strippedPrefix + id + "/" + attr
}

// motoParams are the parameters of the stacks created in moto: the defaults (with RDS),
// plus values whose arrival in the functions' environment the test checks, and the
// optional parts switched on (alarm e-mail, custom domain, ADOT layer, registry sync), so
// that their resources are created too (or shown to be in motoUnsupported).
var motoParams = map[string]string{
	"LogLevel":                   "debug",
	"FirstAdminEmail":            "admin@example.com",
	"RegistrySyncUrl":            "https://registry.example.com",
	"TrustedIdps":                `[{"issuer":"https://idp.example.com","jwksUrl":"https://idp.example.com/keys","allowedClientIds":["c1"]}]`,
	"AlarmEmail":                 "oncall@example.com",
	"CustomDomainName":           "mcp.example.com",
	"CustomDomainCertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000",
	"AdotCollectorLayerArn":      "arn:aws:lambda:us-east-1:901920570463:layer:aws-otel-collector-arm64-ver-0-117-0:1",
}

// trueConditions are the conditions that hold with motoParams; falseConditions those that
// do not (HasIdpClientSecret: the stack makes the slot instead). A resource under any other
// condition fails the test (add it here).
var (
	trueConditions  = []string{"UseRds", "SyncRegistry", "CreateIdpClientSecret", "HasAlarmEmail", "HasCustomDomain", "UseAdot"}
	falseConditions = []string{"HasIdpClientSecret"}
)

// samTranslated is template.yaml after the SAM transform, as CloudFormation JSON, from
// infra/scripts/sam-translate.py (cfn-lint's SAM translator, offline). Without a python3
// that has cfn-lint it skips, unless REQUIRE_INFRA=1.
func samTranslated(t *testing.T) map[string]any {
	t.Helper()
	root := testpeer.RepoRoot(t)
	py, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(py, "-c", "import cfnlint, samtranslator").Run()
	}
	if err != nil {
		if os.Getenv("REQUIRE_INFRA") == "1" {
			t.Fatalf("no python3 with cfn-lint and samtranslator (REQUIRE_INFRA=1): %v", err)
		}
		t.Skipf("no python3 with cfn-lint and samtranslator: %v", err)
	}
	cmd := exec.Command(py, filepath.Join(root, "infra", "scripts", "sam-translate.py"), filepath.Join(root, "template.yaml"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sam-translate.py: %v\n%s", err, stderr.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("sam-translate.py output: %v", err)
	}
	return doc
}

// forMoto returns a copy of doc (plain CloudFormation) that moto can create, and the
// logical ids taken out (id → type):
//   - the resources of motoUnsupported are taken out; every Ref, GetAtt and ${…} of one in
//     the others and in the Outputs becomes stripped(id, attr), and DependsOn forgets it;
//   - Rules and the CDK's BootstrapVersion parameter go (moto evaluates no Rules; the
//     parameter is an SSM lookup of the CDK bootstrap stack);
//   - every function's Code is the zip s3://codeBucket/codeKey (moto reads it at creation);
//   - the KMS keys lose their Tags: moto 5.2.1 reads CloudFormation tags of a key as
//     TagKey/TagValue and answers CreateStack with a 500 for Key/Value; and their KeyPolicy
//     becomes a JSON string (pseudo parameters resolved): moto stores an object policy as
//     is and then fails every KMS call on the key with a 500.
func forMoto(t *testing.T, doc map[string]any, codeBucket, codeKey string) (map[string]any, map[string]string) {
	t.Helper()
	var out map[string]any
	b, _ := json.Marshal(doc)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	delete(out, "Rules")
	if ps, ok := out["Parameters"].(map[string]any); ok {
		delete(ps, "BootstrapVersion")
	}
	res := out["Resources"].(map[string]any)
	gone := map[string]string{}
	for id, r := range res {
		if typ := r.(map[string]any)["Type"].(string); motoUnsupported[typ] != "" {
			gone[id] = typ
			delete(res, id)
		}
	}
	for _, r := range res {
		r := r.(map[string]any)
		switch dep := r["DependsOn"].(type) {
		case string:
			if gone[dep] != "" {
				delete(r, "DependsOn")
			}
		case []any:
			dep = slices.DeleteFunc(dep, func(d any) bool { return gone[d.(string)] != "" })
			if len(dep) == 0 {
				delete(r, "DependsOn")
			} else {
				r["DependsOn"] = dep
			}
		}
		props, _ := r["Properties"].(map[string]any)
		switch r["Type"] {
		case "AWS::Lambda::Function":
			props["Code"] = map[string]any{"S3Bucket": codeBucket, "S3Key": codeKey}
		case "AWS::KMS::Key":
			delete(props, "Tags")
			pol, err := json.Marshal(resolvePseudo(props["KeyPolicy"]))
			if err != nil {
				t.Fatal(err)
			}
			props["KeyPolicy"] = string(pol)
		}
	}
	out["Resources"] = replaceRefs(res, gone)
	if o, ok := out["Outputs"]; ok {
		out["Outputs"] = replaceRefs(o, gone)
	}
	return out, gone
}

// resolvePseudo returns v with the pseudo parameters AWS::Partition, AWS::AccountId and
// AWS::Region (moto's: aws, 123456789012, us-east-1) resolved, in Ref, Fn::Sub (string form)
// and Fn::Join: what a key policy uses.
func resolvePseudo(v any) any {
	pseudo := map[string]string{"AWS::Partition": "aws", "AWS::AccountId": "123456789012", "AWS::Region": "us-east-1"}
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 1 {
			if r, ok := v["Ref"].(string); ok && pseudo[r] != "" {
				return pseudo[r]
			}
			if s, ok := v["Fn::Sub"].(string); ok {
				for k, p := range pseudo {
					s = strings.ReplaceAll(s, "${"+k+"}", p)
				}
				return s
			}
			if j, ok := v["Fn::Join"].([]any); ok && len(j) == 2 {
				var parts []string
				for _, e := range j[1].([]any) {
					parts = append(parts, fmt.Sprint(resolvePseudo(e)))
				}
				return strings.Join(parts, j[0].(string))
			}
		}
		out := map[string]any{}
		for k, e := range v {
			out[k] = resolvePseudo(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = resolvePseudo(e)
		}
		return out
	}
	return v
}

var subVar = regexp.MustCompile(`\$\{([^!}][^}]*)\}`)

// replaceRefs replaces, in v, every reference to a resource of gone by its stand-in.
func replaceRefs(v any, gone map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 1 {
			if id, ok := v["Ref"].(string); ok && gone[id] != "" {
				return stripped(id, "")
			}
			if ga, ok := v["Fn::GetAtt"]; ok {
				var id, attr string
				switch ga := ga.(type) {
				case string:
					id, attr, _ = strings.Cut(ga, ".")
				case []any:
					id, attr = ga[0].(string), fmt.Sprint(ga[1])
				}
				if gone[id] != "" {
					return stripped(id, attr)
				}
			}
			if s, ok := v["Fn::Sub"]; ok {
				sub := func(s string) string {
					return subVar.ReplaceAllStringFunc(s, func(m string) string {
						ref := m[2 : len(m)-1]
						id, attr, _ := strings.Cut(ref, ".")
						if gone[id] == "" {
							return m
						}
						return stripped(id, attr)
					})
				}
				switch s := s.(type) {
				case string:
					return map[string]any{"Fn::Sub": sub(s)}
				case []any:
					return map[string]any{"Fn::Sub": []any{sub(s[0].(string)), replaceRefs(s[1], gone)}}
				}
			}
		}
		for k, e := range v {
			v[k] = replaceRefs(e, gone)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = replaceRefs(e, gone)
		}
	}
	return v
}

// motoClients are the service clients of one moto_server.
type motoClients struct {
	cfn *cloudformation.Client
	ec2 *ec2.Client
	lam *lambda.Client
	kms *kms.Client
	s3  *s3.Client
	eb  *eventbridge.Client
	rds *rds.Client
}

func newMotoClients(url string) motoClients {
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
	return motoClients{
		cfn: cloudformation.NewFromConfig(cfg), ec2: ec2.NewFromConfig(cfg), lam: lambda.NewFromConfig(cfg),
		kms: kms.NewFromConfig(cfg), eb: eventbridge.NewFromConfig(cfg), rds: rds.NewFromConfig(cfg),
		s3: s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }),
	}
}

// uploadCode puts a zip holding a placeholder bootstrap at s3://bucket/bootstrap.zip.
func uploadCode(t *testing.T, ctx context.Context, c motoClients, bucket string) string {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	w, _ := z.Create("bootstrap")
	_, _ = w.Write([]byte("placeholder"))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("bootstrap.zip"),
		Body: bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}
	return "bootstrap.zip"
}

// createStack creates doc as stack name with params and waits for a final status; it
// returns the stack and its resources by logical id (resources whose condition is false
// are left out).
func createStack(t *testing.T, ctx context.Context, c motoClients, name string, doc map[string]any, params map[string]string) (cfntypes.Stack, map[string]cfntypes.StackResourceSummary) {
	t.Helper()
	body, _ := json.Marshal(doc)
	in := &cloudformation.CreateStackInput{StackName: aws.String(name), TemplateBody: aws.String(string(body)),
		Capabilities: []cfntypes.Capability{cfntypes.CapabilityCapabilityIam, cfntypes.CapabilityCapabilityNamedIam, cfntypes.CapabilityCapabilityAutoExpand}}
	declared, _ := doc["Parameters"].(map[string]any)
	for k, v := range params {
		if _, ok := declared[k]; ok {
			in.Parameters = append(in.Parameters, cfntypes.Parameter{ParameterKey: aws.String(k), ParameterValue: aws.String(v)})
		}
	}
	if _, err := c.cfn.CreateStack(ctx, in); err != nil {
		t.Fatalf("CreateStack %s: %v", name, err)
	}
	var st cfntypes.Stack
	for deadline := time.Now().Add(testpeer.Scaled(2 * time.Minute)); ; {
		out, err := c.cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		st = out.Stacks[0]
		if !strings.HasSuffix(string(st.StackStatus), "_IN_PROGRESS") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stack %s still %s", name, st.StackStatus)
		}
		time.Sleep(200 * time.Millisecond)
	}
	res := map[string]cfntypes.StackResourceSummary{}
	p := cloudformation.NewListStackResourcesPaginator(c.cfn, &cloudformation.ListStackResourcesInput{StackName: aws.String(name)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.StackResourceSummaries {
			if id := aws.ToString(r.LogicalResourceId); id != "" { // moto lists a resource whose condition is false without id
				res[id] = r
			}
		}
	}
	return st, res
}

// TestMotoStackSAM creates template.yaml (after the SAM transform) in moto.
func TestMotoStackSAM(t *testing.T) {
	t.Parallel()
	testMotoStack(t, "sam", samTranslated(t))
}

// TestMotoStackCDK creates the CDK app's synthesized template in moto.
func TestMotoStackCDK(t *testing.T) {
	t.Parallel()
	testMotoStack(t, "cdk", cdkTemplate(t))
}

// testMotoStack creates doc, without motoUnsupported, in moto_server and asserts on what
// moto made: every remaining resource created (CREATE_COMPLETE), the network, the functions
// with their environment and VPC placement, the KMS keys, the bucket, the schedules and the
// database instance.
func testMotoStack(t *testing.T, name string, doc map[string]any) {
	ctx := context.Background()
	c := newMotoClients(testpeer.Moto(t))
	suffix := fmt.Sprintf("%d", time.Now().UnixNano())
	codeBucket := "agentpack-moto-code-" + name + "-" + suffix
	key := uploadCode(t, ctx, c, codeBucket)
	tpl, gone := forMoto(t, doc, codeBucket, key)
	st, res := createStack(t, ctx, c, "agentpack-moto-"+name+"-"+suffix, tpl, motoParams)
	if st.StackStatus != cfntypes.StackStatusCreateComplete {
		t.Fatalf("stack status %s (%s), want CREATE_COMPLETE", st.StackStatus, aws.ToString(st.StackStatusReason))
	}
	t.Logf("%s: moto created %d resources; taken out: %d (%v)", name, len(res), len(gone), typesOf(gone))

	// Every resource left in the template was created, and only those whose condition holds.
	phys := map[string]string{}
	for id, r := range tpl["Resources"].(map[string]any) {
		r := r.(map[string]any)
		cond, _ := r["Condition"].(string)
		want := cond == "" || slices.Contains(trueConditions, cond)
		if cond != "" && !want && !slices.Contains(falseConditions, cond) {
			t.Errorf("%s: resource %s under condition %s, in neither trueConditions nor falseConditions", name, id, cond)
			continue
		}
		s, listed := res[id]
		switch {
		case want && !listed:
			t.Errorf("%s: moto did not create %s (%s): add its type to motoUnsupported with the reason", name, id, r["Type"])
		case !want && listed:
			t.Errorf("%s: %s created although its condition %s is false", name, id, cond)
		case listed:
			if s.ResourceStatus != cfntypes.ResourceStatusCreateComplete || aws.ToString(s.ResourceType) != r["Type"] {
				t.Errorf("%s: %s is %s %s, want %s CREATE_COMPLETE", name, id, aws.ToString(s.ResourceType), s.ResourceStatus, r["Type"])
			}
			phys[id] = aws.ToString(s.PhysicalResourceId)
		}
	}
	byType := func(typ string) []string {
		var ids []string
		for id, r := range tpl["Resources"].(map[string]any) {
			if r.(map[string]any)["Type"] == typ && phys[id] != "" {
				ids = append(ids, phys[id])
			}
		}
		slices.Sort(ids)
		return ids
	}

	// The network: one VPC 10.40.0.0/16 with four subnets in two AZs; the private ones
	// route 0.0.0.0/0 through the one NAT gateway, which sits in a public subnet (a route
	// to the internet gateway).
	vpcs := byType("AWS::EC2::VPC")
	if len(vpcs) != 1 {
		t.Fatalf("%s: VPCs %v, want one", name, vpcs)
	}
	vpcOut, err := c.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: vpcs})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(vpcOut.Vpcs[0].CidrBlock); got != "10.40.0.0/16" {
		t.Errorf("%s: VPC CIDR %s, want 10.40.0.0/16", name, got)
	}
	inVpc := []ec2types.Filter{{Name: aws.String("vpc-id"), Values: vpcs}}
	subOut, err := c.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: inVpc})
	if err != nil {
		t.Fatal(err)
	}
	azs := map[string]bool{}
	for _, s := range subOut.Subnets {
		azs[aws.ToString(s.AvailabilityZone)] = true
	}
	if len(subOut.Subnets) != 4 || len(azs) != 2 {
		t.Errorf("%s: %d subnets in %d AZs, want 4 in 2", name, len(subOut.Subnets), len(azs))
	}
	nats := byType("AWS::EC2::NatGateway")
	natOut, err := c.ec2.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{NatGatewayIds: nats})
	if err != nil || len(natOut.NatGateways) != 1 {
		t.Fatalf("%s: NAT gateways %v: %v, want one", name, nats, err)
	}
	natSubnet := aws.ToString(natOut.NatGateways[0].SubnetId)
	// Routing: a route table of the VPC sends 0.0.0.0/0 to the internet gateway, another to
	// the NAT gateway. (moto does not show a template's subnet associations in
	// DescribeRouteTables: which subnet uses which table is checked in the templates only.)
	rtOut, err := c.ec2.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: inVpc})
	if err != nil {
		t.Fatal(err)
	}
	var toIGW, toNAT bool
	for _, rt := range rtOut.RouteTables {
		for _, r := range rt.Routes {
			if aws.ToString(r.DestinationCidrBlock) == "0.0.0.0/0" {
				toIGW = toIGW || strings.HasPrefix(aws.ToString(r.GatewayId), "igw-")
				toNAT = toNAT || aws.ToString(r.NatGatewayId) == nats[0]
			}
		}
	}
	if !toIGW || !toNAT {
		t.Errorf("%s: default routes to the internet gateway %v, to the NAT gateway %v; want both", name, toIGW, toNAT)
	}

	// The security groups, by who may reach PostgreSQL (5432) in each. (moto ignores a
	// group's SecurityGroupEgress: every group keeps the default allow-all egress, so the
	// egress rules are checked in the templates only.)
	ingressFrom := func(sg string) []string {
		out, err := c.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{sg}})
		if err != nil || len(out.SecurityGroups) != 1 {
			t.Fatalf("%s: security group %s: %v", name, sg, err)
		}
		if v := aws.ToString(out.SecurityGroups[0].VpcId); v != vpcs[0] {
			t.Errorf("%s: security group %s in %s, want the stack's VPC", name, sg, v)
		}
		var from []string
		for _, p := range out.SecurityGroups[0].IpPermissions {
			if aws.ToInt32(p.FromPort) != 5432 {
				continue
			}
			for _, g := range p.UserIdGroupPairs {
				from = append(from, aws.ToString(g.GroupId))
			}
			if len(p.IpRanges) > 0 {
				t.Errorf("%s: security group %s lets CIDR ranges %v reach PostgreSQL", name, sg, p.IpRanges)
			}
		}
		slices.Sort(from)
		return slices.Compact(from)
	}

	// The database instance.
	dbs := byType("AWS::RDS::DBInstance")
	dbOut, err := c.rds.DescribeDBInstances(ctx, &rds.DescribeDBInstancesInput{DBInstanceIdentifier: aws.String(phys["Database"])})
	if err != nil || len(dbs) != 1 || len(dbOut.DBInstances) != 1 {
		t.Fatalf("%s: database instances %v: %v", name, dbs, err)
	}
	db := dbOut.DBInstances[0]
	if aws.ToString(db.Engine) != "postgres" || aws.ToString(db.DBInstanceClass) != "db.t4g.micro" ||
		!aws.ToBool(db.StorageEncrypted) || aws.ToBool(db.PubliclyAccessible) {
		t.Errorf("%s: database %s %s encrypted=%v public=%v, want postgres db.t4g.micro encrypted, not public", name,
			aws.ToString(db.Engine), aws.ToString(db.DBInstanceClass), aws.ToBool(db.StorageEncrypted), aws.ToBool(db.PubliclyAccessible))
	}
	dbHost := aws.ToString(db.Endpoint.Address)
	// The database's group (DbSecurityGroup…; moto gives the instance the default VPC's
	// group, ignoring VPCSecurityGroups) admits RDS Proxy's and the migration function's
	// groups; RDS Proxy's admits the serving functions'.
	if db.DBSubnetGroup == nil {
		t.Fatalf("%s: database without a subnet group", name)
	}
	var dbSG string
	for id, r := range tpl["Resources"].(map[string]any) {
		if r.(map[string]any)["Type"] == "AWS::EC2::SecurityGroup" && strings.HasPrefix(id, "DbSecurityGroup") {
			dbSG = phys[id]
		}
	}
	var proxySG, migrateSG, lambdaSG string
	for _, sg := range ingressFrom(dbSG) {
		if from := ingressFrom(sg); len(from) == 1 {
			proxySG, lambdaSG = sg, from[0]
		} else {
			migrateSG = sg
		}
	}
	if proxySG == "" || migrateSG == "" || lambdaSG == "" || lambdaSG == migrateSG {
		t.Errorf("%s: PostgreSQL reachable from proxy %q, migration %q, functions via the proxy %q; want three groups", name, proxySG, migrateSG, lambdaSG)
	}
	var dbSubnets []string
	for _, sn := range db.DBSubnetGroup.Subnets {
		dbSubnets = append(dbSubnets, aws.ToString(sn.SubnetIdentifier))
	}
	slices.Sort(dbSubnets)

	// The KMS keys: the upstream-token key enabled and rotated. (moto creates every key of a
	// template as SYMMETRIC_DEFAULT, ignoring KeySpec: the signing key's RSA_2048
	// SIGN_VERIFY is checked in the templates, kms_test.go.)
	for _, id := range []string{"UpstreamAuthKey", "AuthSigningKey"} {
		k, err := c.kms.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(phys[id])})
		if err != nil || !k.KeyMetadata.Enabled {
			t.Errorf("%s: KMS key %s (%s): %v", name, id, phys[id], err)
		}
	}
	if rot, err := c.kms.GetKeyRotationStatus(ctx, &kms.GetKeyRotationStatusInput{KeyId: aws.String(phys["UpstreamAuthKey"])}); err != nil || !rot.KeyRotationEnabled {
		t.Errorf("%s: UpstreamAuthKey rotation: %v %v, want enabled", name, rot, err)
	}

	// The catalog bucket exists.
	if _, err := c.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(phys["CatalogBucket"])}); err != nil {
		t.Errorf("%s: catalog bucket %q: %v", name, phys["CatalogBucket"], err)
	}

	// The functions.
	serving := []string{"McpFunction", "MarketplaceFunction", "PinsFunction", "HealthCheckFunction"}
	arns := map[string]string{}
	for _, id := range append([]string{"MigrationFunction"}, serving...) {
		fn, err := c.lam.GetFunction(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(phys[id])})
		if err != nil {
			t.Errorf("%s: function %s (%s): %v", name, id, phys[id], err)
			continue
		}
		cfg := fn.Configuration
		arns[id] = aws.ToString(cfg.FunctionArn)
		if cfg.Runtime != "provided.al2023" || aws.ToString(cfg.Handler) != "bootstrap" {
			t.Errorf("%s: %s runtime %s handler %s, want provided.al2023 bootstrap", name, id, cfg.Runtime, aws.ToString(cfg.Handler))
		}
		wantTimeout := map[string]int32{"McpFunction": 900, "MigrationFunction": 900, "MarketplaceFunction": 29, "PinsFunction": 29}[id]
		if wantTimeout != 0 && aws.ToInt32(cfg.Timeout) != wantTimeout {
			t.Errorf("%s: %s timeout %d s, want %d", name, id, aws.ToInt32(cfg.Timeout), wantTimeout)
		}
		vc := cfg.VpcConfig
		if vc == nil || len(vc.SubnetIds) != 2 || len(vc.SecurityGroupIds) != 1 {
			t.Errorf("%s: %s VPC config %+v, want two subnets and one security group", name, id, vc)
			continue
		}
		// In the database's (private) subnets, two AZs, not the NAT gateway's (public) one;
		// behind the group the database side admits.
		subnets := slices.Sorted(slices.Values(vc.SubnetIds))
		if !slices.Equal(subnets, dbSubnets) || slices.Contains(subnets, natSubnet) {
			t.Errorf("%s: %s in subnets %v, want the database's %v (not the NAT gateway's %s)", name, id, subnets, dbSubnets, natSubnet)
		}
		wantSG, wantHost := lambdaSG, stripped("DbProxy", "Endpoint")
		if id == "MigrationFunction" {
			wantSG, wantHost = migrateSG, dbHost // the instance itself, not RDS Proxy
		}
		if vc.SecurityGroupIds[0] != wantSG {
			t.Errorf("%s: %s in security group %s, want %s", name, id, vc.SecurityGroupIds[0], wantSG)
		}
		var env map[string]string
		if cfg.Environment != nil {
			env = cfg.Environment.Variables
		}
		want := map[string]string{
			"APP_ENV": "deployed", "LOG_LEVEL": "debug", "CATALOG_BUCKET": phys["CatalogBucket"],
			"UPSTREAM_AUTH_KMS_KEY_ID": phys["UpstreamAuthKey"], "DATABASE_HOST": wantHost,
			"DATABASE_SECRET_ARN": stripped("DbSecret", ""), "DATABASE_SSLMODE": "require", "DATABASE_URL": "",
			"PUBLIC_BASE_URL": "https://mcp.example.com", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318",
		}
		if id == "MarketplaceFunction" {
			want["TRUSTED_IDPS"] = motoParams["TrustedIdps"]
			want["AUTH_SIGNING_KMS_KEY_ID"] = phys["AuthSigningKey"]
			want["IDP_CLIENT_SECRET_ARN"] = stripped("IdpClientSecret", "")
		}
		for k, v := range want {
			if got, ok := env[k]; !ok || got != v {
				t.Errorf("%s: %s env %s = %q (set %v), want %q", name, id, k, got, ok, v)
			}
		}
		if _, ok := env["TRUSTED_IDPS"]; ok && id != "MarketplaceFunction" {
			t.Errorf("%s: %s has TRUSTED_IDPS; only MarketplaceFunction may", name, id)
		}
	}

	// The schedules: the health check every 30 minutes, and the registry sync
	// (RegistrySyncUrl is set) at RegistrySyncRate with its input; both invoke
	// HealthCheckFunction.
	rules, err := c.eb.ListRules(ctx, &eventbridge.ListRulesInput{})
	if err != nil {
		t.Fatal(err)
	}
	schedules := map[string]string{}
	for _, r := range rules.Rules {
		if !slices.Contains(byType("AWS::Events::Rule"), aws.ToString(r.Name)) && !slices.Contains(byType("AWS::Events::Rule"), aws.ToString(r.Arn)) {
			continue
		}
		tg, err := c.eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: r.Name})
		if err != nil || len(tg.Targets) != 1 {
			t.Errorf("%s: rule %s targets %v: %v, want one", name, aws.ToString(r.Name), tg, err)
			continue
		}
		if got := aws.ToString(tg.Targets[0].Arn); got != arns["HealthCheckFunction"] {
			t.Errorf("%s: rule %s targets %s, want HealthCheckFunction", name, aws.ToString(r.Name), got)
		}
		schedules[aws.ToString(r.ScheduleExpression)] = aws.ToString(tg.Targets[0].Input)
	}
	wantSchedules := map[string]string{"rate(30 minutes)": "", "rate(1 day)": `{"action":"registry-sync"}`}
	if fmt.Sprint(schedules) != fmt.Sprint(wantSchedules) {
		t.Errorf("%s: schedules (expression → input) %v, want %v", name, schedules, wantSchedules)
	}
}

func typesOf(m map[string]string) []string {
	var out []string
	for _, t := range m {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// TestMotoUnsupportedTypes keeps motoUnsupported honest. Each of its types still occurs in
// template.yaml (after the SAM transform) or the CDK template; and moto still creates none
// of them: one stack holding one resource of each (as the templates write it, references to
// other resources replaced by stand-ins) completes with none of them created. A moto that
// models one of them fails here. Custom::DatabaseMigration is not probed (moto would try to
// invoke its function).
func TestMotoUnsupportedTypes(t *testing.T) {
	t.Parallel()
	docs := map[string]map[string]any{"sam": samTranslated(t)}
	if os.Getenv("CDK_OUT_DIR") != "" || os.Getenv("REQUIRE_INFRA") == "1" {
		docs["cdk"] = cdkTemplate(t)
	}
	probe := map[string]any{}
	for _, doc := range docs {
		for id, r := range doc["Resources"].(map[string]any) {
			typ := r.(map[string]any)["Type"].(string)
			if motoUnsupported[typ] == "" || strings.HasPrefix(typ, "Custom::") {
				continue
			}
			if _, ok := probe[typ]; !ok {
				probe[typ] = map[string]any{"id": id, "res": r}
			}
		}
	}
	seen := map[string]bool{"Custom::DatabaseMigration": true}
	for _, doc := range docs {
		for _, r := range doc["Resources"].(map[string]any) {
			seen[r.(map[string]any)["Type"].(string)] = true
		}
	}
	if len(docs) == 2 {
		for typ := range motoUnsupported {
			if !seen[typ] {
				t.Errorf("motoUnsupported lists %s, which neither template has: remove it", typ)
			}
		}
	}

	// Every other resource of the templates is a stand-in: the probe's resources keep
	// their properties, with every Ref/GetAtt replaced.
	all := map[string]string{}
	for _, doc := range docs {
		for id, r := range doc["Resources"].(map[string]any) {
			all[id] = r.(map[string]any)["Type"].(string)
		}
	}
	res := map[string]any{}
	ids := map[string]string{}
	for typ, p := range probe {
		p := p.(map[string]any)
		id := p["id"].(string)
		r := map[string]any{}
		b, _ := json.Marshal(p["res"])
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		delete(r, "DependsOn")
		delete(r, "Condition")
		res[id] = replaceRefs(r, all)
		ids[id] = typ
	}
	// The parameters and conditions the probed properties use, from both templates.
	params, conds := map[string]any{}, map[string]any{}
	for _, doc := range docs {
		for k, v := range doc["Parameters"].(map[string]any) {
			if k != "BootstrapVersion" {
				params[k] = v
			}
		}
		if cs, ok := doc["Conditions"].(map[string]any); ok {
			for k, v := range cs {
				conds[k] = v
			}
		}
	}
	ctx := context.Background()
	c := newMotoClients(testpeer.Moto(t))
	st, created := createStack(t, ctx, c, fmt.Sprintf("agentpack-moto-probe-%d", time.Now().UnixNano()),
		map[string]any{"AWSTemplateFormatVersion": "2010-09-09", "Parameters": params, "Conditions": conds, "Resources": res}, motoParams)
	if st.StackStatus != cfntypes.StackStatusCreateComplete {
		t.Errorf("probe stack %s (%s): moto now refuses one of %v", st.StackStatus, aws.ToString(st.StackStatusReason), typesOf(ids))
	}
	for id, r := range created {
		t.Errorf("moto now creates %s (%s as %s): take it out of motoUnsupported and assert on it in testMotoStack",
			ids[id], id, aws.ToString(r.PhysicalResourceId))
	}
	if len(res) == 0 {
		t.Error("no probe resource: the templates have none of motoUnsupported's types")
	}
	t.Logf("probed %d types: %v", len(ids), typesOf(ids))
}
