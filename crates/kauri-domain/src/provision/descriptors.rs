//! The descriptors AD gives the naming context heads and a few well-known containers at
//! provisioning, where they differ from their class's `defaultSecurityDescriptor` (the
//! domain head's inheritable grants to Pre-Windows 2000 Compatible Access, the containers
//! that only administrators may create in, Deleted Objects readable by administrators
//! only, …). These are AD's defaults as SDDL; only their explicit part is stated, and
//! what the parent passes down is added when the object is created, as for any object.

use kauri_db::Dn;

use super::ProvisionEntry;

/// The domain naming context's head (owner and group Administrators).
const DOMAIN_HEAD: &str = "O:BAG:BAD:AI\
(OA;CIIO;RP;4c164200-20c0-11d0-a768-00aa006e0529;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RP;4c164200-20c0-11d0-a768-00aa006e0529;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RP;5f202010-79a5-11d0-9020-00c04fc2d4cf;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RP;5f202010-79a5-11d0-9020-00c04fc2d4cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RP;bc0ac240-79a9-11d0-9020-00c04fc2d4cf;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RP;bc0ac240-79a9-11d0-9020-00c04fc2d4cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RP;037088f8-0ae1-11d2-b422-00a0c968f939;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RP;037088f8-0ae1-11d2-b422-00a0c968f939;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;RO)\
(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;DD)\
(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967a86-0de6-11d0-a285-00aa003049e2;ED)\
(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967a9c-0de6-11d0-a285-00aa003049e2;ED)\
(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967aba-0de6-11d0-a285-00aa003049e2;ED)\
(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;BA)\
(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;1131f6ae-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;e2a36dc9-ae17-47c3-b58b-be34c55ba633;;S-1-5-32-557)\
(OA;;RP;c7407360-20bf-11d0-a768-00aa006e0529;;RU)\
(OA;;RP;b8119fd0-04f6-4762-ab7a-4986c76b3f9a;;RU)\
(OA;CIIO;RPLCLORC;;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RPLCLORC;;bf967a9c-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RPLCLORC;;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;;CR;05c74c5e-4deb-43b4-bd9f-86664c2a7fd5;;AU)\
(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;ED)\
(OA;;CR;ccc2dc7d-a6ad-4a7a-8846-c04e3cc53501;;AU)\
(OA;;CR;280f369c-67c7-438e-ae98-1d46f3c6f541;;AU)\
(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;ED)\
(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;ED)\
(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;ED)\
(OA;;CR;1131f6ae-9c07-11d1-f79f-00c04fc2dcd2;;ED)\
(OA;;RP;b8119fd0-04f6-4762-ab7a-4986c76b3f9a;;AU)\
(OA;CIIO;RPWPCR;91e647de-d96f-4b70-9557-d63ff4f3ccd8;;PS)\
(OA;CIIO;WP;ea1b7b93-5e48-46d5-bc6c-4df4fda78a35;bf967a86-0de6-11d0-a285-00aa003049e2;PS)\
(OA;;CR;3e0f7e18-2c7a-4c10-ba82-4d926db99a3e;;CN)\
(OA;OICI;RPWP;3f78c3e5-f79a-46bd-a0b8-9d18116ddc79;;PS)\
(OA;CI;RPWP;5b47d60f-6090-40b2-9f37-2a4de88f3063;;KA)\
(OA;CI;RPWP;5b47d60f-6090-40b2-9f37-2a4de88f3063;;EK)\
(OA;CIIO;SW;9b026da6-0d3c-465c-8bee-5199d7165cba;bf967a86-0de6-11d0-a285-00aa003049e2;PS)\
(OA;CIIO;SW;9b026da6-0d3c-465c-8bee-5199d7165cba;bf967a86-0de6-11d0-a285-00aa003049e2;CO)\
(A;;RPWPCRCCLCLORCWOWDSW;;;DA)\
(A;CI;RPWPCRCCDCLCLORCWOWDSDDTSW;;;EA)\
(A;;RPRC;;;RU)\
(A;CI;LC;;;RU)\
(A;CI;RPWPCRCCLCLORCWOWDSDSW;;;BA)\
(A;;RP;;;WD)\
(A;;RPLCLORC;;;ED)\
(A;;RPLCLORC;;;AU)\
(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)\
S:AI(OU;CISA;WP;f30e3bbe-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)\
(OU;CISA;WP;f30e3bbf-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)\
(AU;SA;CR;;;DU)(AU;SA;CR;;;BA)(AU;SA;WPWOWD;;;WD)";

/// The configuration naming context's head.
const CONFIG_HEAD: &str = "O:EAG:EAD:\
(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;ED)\
(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(A;;RPLCLORC;;;AU)(A;CI;RPWPCRCCDCLCLORCWOWDSDDTSW;;;EA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)\
(A;CIIO;RPWPCRCCLCLORCWOWDSDSW;;;DA)(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;ED)\
(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;ED)(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;BA)(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;RO)\
S:(AU;SA;WPWOWD;;;WD)(AU;SA;CR;;;BA)(AU;SA;CR;;;DU)(OU;SA;CR;45ec5156-db7e-47bb-b53f-dbeb2d03c40f;;WD)";

/// The schema naming context's head.
const SCHEMA_HEAD: &str = "O:SAG:SAD:AI\
(OA;;CR;e12b56b6-0a95-11d1-adbb-00c04fd8d5cd;;SA)(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;ED)\
(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;ED)\
(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;BA)(A;CI;RPLCLORC;;;AU)\
(A;CI;RPWPCRCCLCLORCWOWDSW;;;SA)(A;CI;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)\
(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;ED)\
(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;BA)\
(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;RO)(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;RO)\
(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;RO)\
S:(AU;SA;WPCCDCWOWDSDDTSW;;;WD)(AU;CISA;WP;;;WD)(AU;SA;CR;;;BA)(AU;SA;CR;;;DU)\
(OU;SA;CR;e12b56b6-0a95-11d1-adbb-00c04fd8d5cd;;WD)(OU;SA;CR;45ec5156-db7e-47bb-b53f-dbeb2d03c40f;;WD)";

/// The heads of the DomainDnsZones and ForestDnsZones application partitions.
const DNS_PARTITION_HEAD: &str = "O:SYG:BAD:AI\
(OA;CIIO;RP;4c164200-20c0-11d0-a768-00aa006e0529;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RP;4c164200-20c0-11d0-a768-00aa006e0529;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RP;5f202010-79a5-11d0-9020-00c04fc2d4cf;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RP;5f202010-79a5-11d0-9020-00c04fc2d4cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RP;bc0ac240-79a9-11d0-9020-00c04fc2d4cf;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RP;bc0ac240-79a9-11d0-9020-00c04fc2d4cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RP;59ba2f42-79a2-11d0-9020-00c04fc2d3cf;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RP;037088f8-0ae1-11d2-b422-00a0c968f939;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RP;037088f8-0ae1-11d2-b422-00a0c968f939;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967a86-0de6-11d0-a285-00aa003049e2;ED)\
(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967a9c-0de6-11d0-a285-00aa003049e2;ED)\
(OA;CIIO;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;bf967aba-0de6-11d0-a285-00aa003049e2;ED)\
(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;BA)(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;1131f6ad-9c07-11d1-f79f-00c04fc2dcd2;;BA)(OA;;CR;1131f6ae-9c07-11d1-f79f-00c04fc2dcd2;;BA)\
(OA;;CR;e2a36dc9-ae17-47c3-b58b-be34c55ba633;;S-1-5-32-557)\
(OA;;RP;c7407360-20bf-11d0-a768-00aa006e0529;;RU)(OA;;RP;b8119fd0-04f6-4762-ab7a-4986c76b3f9a;;RU)\
(OA;CIIO;RPLCLORC;;4828cc14-1437-45bc-9b07-ad6f015e5f28;RU)\
(OA;CIIO;RPLCLORC;;bf967a9c-0de6-11d0-a285-00aa003049e2;RU)\
(OA;CIIO;RPLCLORC;;bf967aba-0de6-11d0-a285-00aa003049e2;RU)\
(OA;;CR;05c74c5e-4deb-43b4-bd9f-86664c2a7fd5;;AU)(OA;;CR;89e95b76-444d-4c62-991a-0facbeda640c;;ED)\
(OA;;CR;ccc2dc7d-a6ad-4a7a-8846-c04e3cc53501;;AU)(OA;;CR;280f369c-67c7-438e-ae98-1d46f3c6f541;;AU)\
(OA;;CR;1131f6aa-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6ab-9c07-11d1-f79f-00c04fc2dcd2;;ED)\
(OA;;CR;1131f6ac-9c07-11d1-f79f-00c04fc2dcd2;;ED)(OA;;CR;1131f6ae-9c07-11d1-f79f-00c04fc2dcd2;;ED)\
(OA;;RP;b8119fd0-04f6-4762-ab7a-4986c76b3f9a;;AU)\
(OA;CIIO;RPWPCR;91e647de-d96f-4b70-9557-d63ff4f3ccd8;;PS)\
(A;;RPWPCRCCLCLORCWOWDSW;;;DA)(A;CI;RPWPCRCCDCLCLORCWOWDSDDTSW;;;EA)(A;;RPRC;;;RU)\
(A;CI;LC;;;RU)(A;CI;RPWPCRCCLCLORCWOWDSDSW;;;BA)(A;;RP;;;WD)(A;;RPLCLORC;;;ED)\
(A;;RPLCLORC;;;AU)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)\
S:AI(OU;CISA;WP;f30e3bbe-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)\
(OU;CISA;WP;f30e3bbf-9ff0-11d1-b603-0000f80367c1;bf967aa5-0de6-11d0-a285-00aa003049e2;WD)\
(AU;SA;CR;;;DU)(AU;SA;CR;;;BA)(AU;SA;WPWOWD;;;WD)";

/// Deleted Objects of every naming context: the system's, listed by administrators.
const DELETED_OBJECTS: &str = "O:SYG:SYD:PAI(A;;RPWPCCDCLCRCWOWDSDSW;;;SY)(A;;RPLC;;;BA)";

/// Domain containers no one but the system may delete.
const DOMAIN_PROTECTED_1: &str = "D:AI(A;;RPLCLORC;;;AU)(A;;RPWPCRCCLCLORCWOWDSW;;;DA)\
(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)";
const DOMAIN_PROTECTED_2: &str = "D:AI(A;;RPLCLORC;;;AU)(A;;RPWPCRCCDCLCLORCWOWDSW;;;DA)\
(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)";
const INFRASTRUCTURE: &str = "D:(A;;RPLCLORC;;;AU)(A;;RPWPCRCCLCLORCWOWDSW;;;DA)\
(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)S:(AU;SA;WPCR;;;WD)";

/// CN=Computers: account operators create computers, users, groups, inetOrgPersons;
/// print operators printers.
const COMPUTERS: &str = "D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPWPCRCCDCLCLORCWOWDSW;;;DA)\
(OA;;CCDC;bf967a86-0de6-11d0-a285-00aa003049e2;;AO)(OA;;CCDC;bf967aba-0de6-11d0-a285-00aa003049e2;;AO)\
(OA;;CCDC;bf967a9c-0de6-11d0-a285-00aa003049e2;;AO)(OA;;CCDC;bf967aa8-0de6-11d0-a285-00aa003049e2;;PO)\
(A;;RPLCLORC;;;AU)(OA;;CCDC;4828cc14-1437-45bc-9b07-ad6f015e5f28;;AO)S:";
const USERS: &str = "D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPWPCRCCDCLCLORCWOWDSW;;;DA)\
(OA;;CCDC;bf967aba-0de6-11d0-a285-00aa003049e2;;AO)(OA;;CCDC;bf967a9c-0de6-11d0-a285-00aa003049e2;;AO)\
(OA;;CCDC;bf967aa8-0de6-11d0-a285-00aa003049e2;;PO)(A;;RPLCLORC;;;AU)\
(OA;;CCDC;4828cc14-1437-45bc-9b07-ad6f015e5f28;;AO)S:";
const MANAGED_SERVICE_ACCOUNTS: &str = "D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)\
(A;;RPWPCRCCDCLCLORCWOWDSW;;;DA)(OA;;CCDC;ce206244-5827-4a86-ba1c-1c0c386c1b64;;AO)\
(OA;;CCDC;bf967aba-0de6-11d0-a285-00aa003049e2;;AO)(OA;;CCDC;bf967a9c-0de6-11d0-a285-00aa003049e2;;AO)\
(A;;RPLCLORC;;;AU)S:";
const DOMAIN_CONTROLLERS: &str = "D:(A;;RPLCLORC;;;AU)(A;;RPWPCRCCLCLORCWOWDSW;;;DA)\
(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;RPLCLORC;;;ED)S:(AU;SA;CCDCWOWDSDDT;;;WD)(AU;CISA;WP;;;WD)";

/// Configuration containers.
const PARTITIONS: &str = "D:(A;;LCLORC;;;AU)(OA;;RP;e48d0154-bcf8-11d1-8702-00c04fb96050;;AU)\
(OA;;RP;d31a8757-2447-4545-8081-3bb610cacbf2;;AU)(OA;;RP;66171887-8f3c-11d0-afda-00c04fd930c9;;AU)\
(OA;;RP;032160bf-9824-11d1-aec0-0000f80367c1;;AU)(OA;;RP;789ee1eb-8c8e-4e4c-8cec-79b31b7617b5;;AU)\
(OA;;RP;5706aeaf-b940-4fb2-bcfc-5268683ad9fe;;AU)(A;;RPWPCRCCLCLORCWOWDSW;;;EA)\
(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;;CC;;;ED)\
(OA;CIIO;WP;3df793df-9858-4417-a701-735a1ecebf74;bf967a8d-0de6-11d0-a285-00aa003049e2;BA)\
S:(AU;CISA;WPCRCCDCWOWDSDDT;;;WD)";
const SITES: &str = "D:(A;;RPLCLORC;;;AU)\
(OA;CIIO;SW;d31a8757-2447-4545-8081-3bb610cacbf2;f0f8ffab-1191-11d0-a060-00aa006c33ed;RO)\
(A;;RPWPCRCCLCLORCWOWDSW;;;EA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)\
S:(AU;CISA;CCDCSDDT;;;WD)(OU;CIIOSA;CR;;f0f8ffab-1191-11d0-a060-00aa006c33ed;WD)\
(OU;CIIOSA;WP;f30e3bbe-9ff0-11d1-b603-0000f80367c1;bf967ab3-0de6-11d0-a285-00aa003049e2;WD)\
(OU;CIIOSA;WP;f30e3bbf-9ff0-11d1-b603-0000f80367c1;bf967ab3-0de6-11d0-a285-00aa003049e2;WD)\
(OU;CIIOSA;WP;3e10944c-c354-11d0-aff8-0000f80367c1;b7b13124-b82e-11d0-afee-0000f80367c1;WD)";
const NTDS_QUOTAS: &str = "D:(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;EA)(A;;RPLCLORC;;;BA)\
(OA;;CR;4ecc03fe-ffc0-4947-b630-eb672a8a9dbc;;WD)";
const CONFIG_PROTECTED_1: &str =
    "D:AI(A;;RPLCLORC;;;AU)(A;;RPWPCRCCLCLORCWOWDSW;;;EA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)";
const CONFIG_PROTECTED_1_WD: &str =
    "D:AI(A;;RPLCLORC;;;WD)(A;;RPWPCRCCLCLORCWOWDSW;;;EA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)";
const CONFIG_PROTECTED_2: &str =
    "D:AI(A;;RPLCLORC;;;AU)(A;;RPWPCRCCDCLCLORCWOWDSW;;;EA)(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)";

/// `CN=MicrosoftDNS` of the forest partition, and of the domain partition and CN=System.
const FOREST_MICROSOFT_DNS: &str = "O:SYG:SYD:AI(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)\
(A;CI;RPWPCRCCDCLCRCWOWDSDDTSW;;;ED)";
const DOMAIN_MICROSOFT_DNS: &str = "O:SYG:SYD:AI(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;DA)\
(A;;RPWPCRCCDCLCLORCWOWDSDDTSW;;;SY)(A;CI;RPWPCRCCDCLCRCWOWDSDDTSW;;;ED)";

/// The explicit descriptor AD gives `dn` at provisioning, if it is one of the objects
/// that do not take their class default. `domain` is the domain's DN.
pub fn explicit_sddl(dn: &Dn, domain: &Dn) -> Option<String> {
    let text = dn.norm();
    let d = domain.norm();
    let config = format!("cn=configuration,{d}");
    let schema = format!("cn=schema,{config}");
    let domain_dns = format!("dc=domaindnszones,{d}");
    let forest_dns = format!("dc=forestdnszones,{d}");
    let under = |base: &str, rel: &str| text == format!("{rel},{base}");
    if text == d {
        return Some(DOMAIN_HEAD.into());
    }
    if text == config {
        return Some(CONFIG_HEAD.into());
    }
    if text == schema {
        return Some(SCHEMA_HEAD.into());
    }
    if text == domain_dns || text == forest_dns {
        return Some(DNS_PARTITION_HEAD.into());
    }
    if under(d, "cn=builtin") {
        // The domain head's ACEs, as the container's own.
        let dacl_at = DOMAIN_HEAD.find("D:AI")?;
        return Some(format!("D:{}", &DOMAIN_HEAD[dacl_at + 4..]));
    }
    for base in [d, &config, &domain_dns, &forest_dns] {
        if under(base, "cn=deleted objects") {
            return Some(DELETED_OBJECTS.into());
        }
    }
    for base in [&domain_dns, &forest_dns] {
        if under(base, "cn=infrastructure") {
            return Some(DOMAIN_PROTECTED_1.into());
        }
        if under(base, "cn=lostandfound") {
            return Some(DOMAIN_PROTECTED_2.into());
        }
    }
    let fixed: &[(&str, &str, &str)] = &[
        (d, "cn=system", DOMAIN_PROTECTED_1),
        (d, "cn=lostandfound", DOMAIN_PROTECTED_2),
        (d, "cn=infrastructure", INFRASTRUCTURE),
        (d, "cn=computers", COMPUTERS),
        (d, "cn=users", USERS),
        (d, "cn=managed service accounts", MANAGED_SERVICE_ACCOUNTS),
        (d, "ou=domain controllers", DOMAIN_CONTROLLERS),
        (d, "cn=microsoftdns,cn=system", DOMAIN_MICROSOFT_DNS),
        (&domain_dns, "cn=microsoftdns", DOMAIN_MICROSOFT_DNS),
        (&forest_dns, "cn=microsoftdns", FOREST_MICROSOFT_DNS),
        (&config, "cn=partitions", PARTITIONS),
        (&config, "cn=sites", SITES),
        (&config, "cn=ntds quotas", NTDS_QUOTAS),
        (&config, "cn=services", CONFIG_PROTECTED_1),
        (&config, "cn=lostandfoundconfig", CONFIG_PROTECTED_1_WD),
        (&config, "cn=physical locations", CONFIG_PROTECTED_1_WD),
        (
            &config,
            "cn=wellknown security principals",
            CONFIG_PROTECTED_1_WD,
        ),
        (&config, "cn=forestupdates", CONFIG_PROTECTED_1_WD),
        (&config, "cn=displayspecifiers", CONFIG_PROTECTED_2),
        (&config, "cn=extended-rights", CONFIG_PROTECTED_2),
    ];
    fixed
        .iter()
        .find(|(base, rel, _)| under(base, rel))
        .map(|(_, _, sddl)| (*sddl).to_string())
}

/// Gives the provisioned entries that have one their explicit descriptor (as SDDL text,
/// which the server's own adds accept).
pub fn attach(entries: &mut [ProvisionEntry], domain: &Dn) {
    for pe in entries {
        if pe.entry.get("nTSecurityDescriptor").is_some() {
            continue;
        }
        if let Some(sddl) = explicit_sddl(&pe.entry.dn, domain) {
            pe.entry
                .push("nTSecurityDescriptor", vec![sddl.into_bytes()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::SecurityDescriptor;
    use crate::sid::Sid;

    #[test]
    fn every_fixed_descriptor_parses() {
        let domain = Dn::parse("DC=samdom,DC=example,DC=com").unwrap();
        let sid = Sid::parse("S-1-5-21-1-2-3").unwrap();
        let mut seen = 0;
        for rel in [
            "",
            "CN=Configuration,",
            "CN=Schema,CN=Configuration,",
            "DC=DomainDnsZones,",
            "CN=Builtin,",
            "CN=Deleted Objects,",
            "CN=System,",
            "CN=Users,",
            "CN=Computers,",
            "OU=Domain Controllers,",
            "CN=Partitions,CN=Configuration,",
            "CN=Sites,CN=Configuration,",
            "CN=MicrosoftDNS,DC=ForestDnsZones,",
            "CN=Extended-Rights,CN=Configuration,",
        ] {
            let dn = Dn::parse(&format!("{rel}{domain}")).unwrap();
            let sddl = explicit_sddl(&dn, &domain).unwrap_or_else(|| panic!("{dn}"));
            SecurityDescriptor::from_sddl(&sddl, &sid).unwrap_or_else(|e| panic!("{dn}: {e}"));
            seen += 1;
        }
        assert_eq!(seen, 14);
        let user = Dn::parse(&format!("CN=Administrator,CN=Users,{domain}")).unwrap();
        assert!(explicit_sddl(&user, &domain).is_none());
    }
}
