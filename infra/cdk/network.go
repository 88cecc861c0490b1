package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsrds"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"
)

// database is the network and the database of the stack: the VPC (two AZs, one NAT
// gateway, an S3 gateway endpoint), the security groups of the functions, RDS Proxy, the
// instance and the migration function, the credentials secret, PostgreSQL on RDS and RDS
// Proxy, as in template.yaml.
type database struct {
	vpc       awsec2.Vpc
	subnets   *awsec2.SubnetSelection // the private subnets (with egress through the NAT gateway)
	lambdaSG  awsec2.SecurityGroup    // the serving functions: HTTPS/HTTP out, PostgreSQL to RDS Proxy
	migrateSG awsec2.SecurityGroup    // the migration function: HTTPS out, PostgreSQL to the instance
	instance  awsrds.DatabaseInstance
	secret    awssecretsmanager.ISecret
	proxy     awsrds.DatabaseProxy
}

// newDatabase adds the network and the database to stack, or nothing (nil) when
// cfg.DatabaseURL names an external database.
func newDatabase(stack awscdk.Stack, cfg Config) *database {
	var (
		vpc       awsec2.Vpc
		lambdaSG  awsec2.SecurityGroup
		migrateSG awsec2.SecurityGroup
		dbInst    awsrds.DatabaseInstance
		dbSecret  awssecretsmanager.ISecret
		dbProxy   awsrds.DatabaseProxy
		useRDS    = cfg.DatabaseURL == ""
		vpcSubnet *awsec2.SubnetSelection
	)
	if useRDS {
		vpc = awsec2.NewVpc(stack, jsii.String("Vpc"), &awsec2.VpcProps{
			IpAddresses: awsec2.IpAddresses_Cidr(jsii.String("10.40.0.0/16")),
			MaxAzs:      jsii.Number(2),
			// One NAT gateway: the functions reach external MCP servers through it.
			NatGateways: jsii.Number(1),
			SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
				{Name: jsii.String("public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(24)},
				{Name: jsii.String("private"), SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS, CidrMask: jsii.Number(24)},
			},
			// Catalog reads and writes stay off the NAT gateway.
			GatewayEndpoints: &map[string]*awsec2.GatewayVpcEndpointOptions{
				"S3": {Service: awsec2.GatewayVpcEndpointAwsService_S3()},
			},
		})
		vpcSubnet = &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS}

		lambdaSG = awsec2.NewSecurityGroup(stack, jsii.String("LambdaSecurityGroup"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("Agentpack functions (egress only)"), AllowAllOutbound: jsii.Bool(false),
		})
		lambdaSG.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(443)),
			jsii.String("HTTPS to MCP upstreams, AWS APIs and the JWKS endpoint"), nil)
		lambdaSG.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(80)),
			jsii.String("Plain HTTP upstreams (refused in deployed mode by the URL guard)"), nil)
		lambdaSG.AddEgressRule(awsec2.Peer_Ipv4(vpc.VpcCidrBlock()), awsec2.Port_Tcp(jsii.Number(5432)),
			jsii.String("PostgreSQL through RDS Proxy"), nil)
		proxySG := awsec2.NewSecurityGroup(stack, jsii.String("ProxySecurityGroup"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("RDS Proxy (PostgreSQL from the functions only)"), AllowAllOutbound: jsii.Bool(false),
		})
		proxySG.AddIngressRule(lambdaSG, awsec2.Port_Tcp(jsii.Number(5432)), jsii.String("PostgreSQL from the functions"), nil)
		proxySG.AddEgressRule(awsec2.Peer_Ipv4(vpc.VpcCidrBlock()), awsec2.Port_Tcp(jsii.Number(5432)),
			jsii.String("PostgreSQL to the instance"), nil)
		dbSG := awsec2.NewSecurityGroup(stack, jsii.String("DbSecurityGroup"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("RDS PostgreSQL (from RDS Proxy only)"), AllowAllOutbound: jsii.Bool(false),
		})
		dbSG.AddIngressRule(proxySG, awsec2.Port_Tcp(jsii.Number(5432)), jsii.String("PostgreSQL from RDS Proxy"), nil)
		// The migration function reaches the instance directly (goose's session lock;
		// docs/DATABASE.md), as in template.yaml.
		migrateSG = awsec2.NewSecurityGroup(stack, jsii.String("MigrationSecurityGroup"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("Agentpack migration function (the database directly, AWS APIs)"), AllowAllOutbound: jsii.Bool(false),
		})
		migrateSG.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(443)),
			jsii.String("HTTPS to Secrets Manager and the CloudFormation response URL"), nil)
		migrateSG.AddEgressRule(awsec2.Peer_Ipv4(vpc.VpcCidrBlock()), awsec2.Port_Tcp(jsii.Number(5432)),
			jsii.String("PostgreSQL to the instance directly (not RDS Proxy)"), nil)
		dbSG.AddIngressRule(migrateSG, awsec2.Port_Tcp(jsii.Number(5432)),
			jsii.String("PostgreSQL from the migration function (goose's session lock; docs/DATABASE.md)"), nil)

		secret := awsrds.NewDatabaseSecret(stack, jsii.String("DbSecret"), &awsrds.DatabaseSecretProps{
			Username:          jsii.String("agentpack"),
			Dbname:            jsii.String("agentpack"),
			ExcludeCharacters: jsii.String("\"@/\\ '%:?#[]"),
		})
		overrideID(secret, "DbSecret")
		dbSecret = secret

		db := awsrds.NewDatabaseInstance(stack, jsii.String("Database"), &awsrds.DatabaseInstanceProps{
			Engine: awsrds.DatabaseInstanceEngine_Postgres(&awsrds.PostgresInstanceEngineProps{
				Version: awsrds.PostgresEngineVersion_VER_16_9(),
			}),
			InstanceType:            awsec2.NewInstanceType(jsii.String("t4g.micro")),
			Credentials:             awsrds.Credentials_FromSecret(secret, nil),
			DatabaseName:            jsii.String("agentpack"),
			Vpc:                     vpc,
			VpcSubnets:              vpcSubnet,
			SecurityGroups:          &[]awsec2.ISecurityGroup{dbSG},
			PubliclyAccessible:      jsii.Bool(false),
			StorageEncrypted:        jsii.Bool(true),
			AllocatedStorage:        jsii.Number(20),
			MaxAllocatedStorage:     jsii.Number(100),
			StorageType:             awsrds.StorageType_GP3,
			MultiAz:                 jsii.Bool(false),
			BackupRetention:         awscdk.Duration_Days(jsii.Number(7)),
			DeletionProtection:      jsii.Bool(false),
			CopyTagsToSnapshot:      jsii.Bool(true),
			AutoMinorVersionUpgrade: jsii.Bool(true),
			RemovalPolicy:           awscdk.RemovalPolicy_SNAPSHOT,
		})
		overrideID(db, "Database")
		dbInst = db

		dbProxy = db.AddProxy(jsii.String("DbProxy"), &awsrds.DatabaseProxyOptions{
			Secrets:                   &[]awssecretsmanager.ISecret{secret},
			Vpc:                       vpc,
			VpcSubnets:                vpcSubnet,
			SecurityGroups:            &[]awsec2.ISecurityGroup{proxySG},
			RequireTLS:                jsii.Bool(true),
			IamAuth:                   jsii.Bool(false),
			IdleClientTimeout:         awscdk.Duration_Seconds(jsii.Number(1800)),
			MaxConnectionsPercent:     jsii.Number(90),
			MaxIdleConnectionsPercent: jsii.Number(10),
			BorrowTimeout:             awscdk.Duration_Seconds(jsii.Number(30)),
			DbProxyName:               jsii.String("agentpack-" + cfg.Environment),
		})
		overrideID(dbProxy, "DbProxy")
	}
	if !useRDS {
		return nil
	}
	return &database{vpc: vpc, subnets: vpcSubnet, lambdaSG: lambdaSG, migrateSG: migrateSG,
		instance: dbInst, secret: dbSecret, proxy: dbProxy}
}
