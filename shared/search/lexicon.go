package search

import "strings"

// The tables of the query side (docs/SEARCH.md "Synonyms and other languages"). They are
// written by hand for the domain of MCP tools — files, code hosting, chat, browsers,
// maps, payments, databases, deployments, search, CRM — not generated, and kept small:
// a word missing here still matches itself.

// synonymGroups: each line is a group of English words that answer for each other in
// a query (at synonymWeight). Words are stemmed when the table is built.
const synonymGroups = `
folder directory dir
file document
delete remove erase destroy drop trash purge
create make new add
list enumerate show browse
search find lookup seek query look grep
get fetch retrieve read obtain view
open read view
update edit modify change patch alter mark set
send post message notify tell say ping share announce
write save store put
move rename relocate
copy duplicate clone
download fetch save
upload attach
elevation altitude height
screenshot capture snapshot
photo picture image
web internet online
website site webpage page url
browser tab
click press tap hit
type fill enter input
navigate go open visit
repository repo
bug issue ticket defect
error exception crash failure problem bug
pr pull-request merge-request
reaction emoji thumbs upvote
box field input textbox form
mouse hover mouseover
close resolve
done finished complete completed
plan planning steps
pay payment charge
invoice bill billing
customer client contact
refund reimburse money-back
subscription plan membership recurring
translate translation
weather forecast
direction route
place location venue spot
address geocode coordinates
nearby near around close
restaurant food eat dine cafe
distance far
transcript caption subtitle
video youtube
database db
table collection spreadsheet sheet
row record document entry
sql query
deploy deployment release ship publish rollout
log logs
pod container
cluster kubernetes k8s
scale replica
remember memory memorize
note observation
entity person people
relation relationship link connection
think reason reasoning step
email mail
contact lead person
company organization org account
deal opportunity sale
documentation docs doc reference manual guide
library package framework sdk
comment reply remark
channel room
conversation chat history
run execute exec launch start invoke
command terminal shell cli console
process task job
kill stop terminate end cancel
generate draw render
crawl scrape extract spider
commit push
pipeline build workflow ci
secret credential token key
env environment variable config setting configuration
domain dns hostname
schema structure column describe
count number tally
sms text
call phone voice
map maps
latitude lat
longitude lng lon
app application
function lambda serverless
project workspace
user member account
team group squad
everyone everybody broadcast
mobile phone device viewport responsive
organization org
wait sleep pause
hover mouseover
scroll
key keyboard
dialog popup alert
cookie session
console devtools
network request traffic
performance speed trace profile
summary summarize digest overview
news headline article
price cost pricing
product item sku
order purchase
cart checkout
coupon discount promo
dispute chargeback
balance funds
transfer payout
vector embedding
similar semantic
index indexes
cache redis
key-value kv
branch fork
merge combine
review approve
milestone sprint
label tag
assign assignee owner
star favorite
notification alert
schedule calendar meeting
read-only
know knowledge remember recall earlier
javascript js script
inside within contain
boundary border polygon zone
rating review reviews details
convert turn transform parse
many count number total
fail failure failed failing broken break breaking
flaky intermittent unstable
accessibility a11y
audit check
relation relationship link associate association
spreadsheet table sheet
rent rental stay accommodation lodging listing
flat apartment home house
drive driving travel commute direction route
restaurant place business shop store pharmacy cafe
neighbourhood neighborhood area
request call http endpoint api rest
enter key keyboard
sitemap map urls
program process app application
machine computer device
slow performance speed explain plan
grow capacity scale replica
database db sql
analyze analysis investigate diagnose
cause reason root-cause why
`

// phraseTable: two-word phrases that mean one thing, with the English words that
// answer them.
const phraseTable = `
sea level = elevation altitude
pull request = pull request pr
merge request = merge request
text message = sms message
phone number = phone number
zip code = postal code address
time zone = timezone
web page = webpage page url
web site = website page url
dead link = link status
log in = login auth
sign in = login auth
sign up = signup register
how far = distance
get touch = contact message send
how long = duration distance time
`

// lexiconTable: Portuguese (pt), Spanish (es) and German (de) words and the English
// words they stand for. A key ending in "*" is a stem: it matches any word that starts
// with it (at least 4 letters). Keys are written without accents (queries are folded).
const lexiconTable = `
pt arquivo* = file
pt ficheiro* = file
pt pasta* = folder directory
pt diretorio* = directory
pt apag* = delete
pt exclu* = delete
pt remov* = remove delete
pt cria = create
pt criar = create
pt crie = create
pt criando = create
pt criem = create
pt novo = new
pt nova = new
pt novos = new
pt novas = new
pt adicion* = add
pt list* = list
pt mostr* = show list
pt busc* = search find
pt procur* = search find
pt pesquis* = search
pt encontr* = find
pt obter = get
pt obtenh* = get
pt pegar = get
pt traz* = get
pt le = read
pt ler = read
pt leia = read
pt escrev* = write
pt grav* = write save
pt salv* = save
pt atualiz* = update
pt edit* = edit
pt altera* = change update
pt altere = change update
pt mudar = change move
pt mude = change move
pt muda = change move
pt mover = move
pt mova = move
pt renome* = rename
pt copi* = copy
pt envia* = send
pt envie = send
pt mand* = send
pt avis* = notify tell
pt mensag* = message
pt conversa* = conversation chat
pt canal = channel
pt canais = channel
pt equipe* = team
pt repositori* = repository
pt problem* = issue problem
pt erro* = error
pt tarefa* = task issue
pt chamad* = ticket call
pt pagament* = payment
pt paga* = pay
pt pague = pay
pt cobr* = charge
pt fatura* = invoice
pt client* = customer
pt reembols* = refund
pt assinatur* = subscription
pt preco* = price
pt produt* = product
pt pedido* = order
pt traduz* = translate
pt traduc* = translation
pt idioma* = language
pt lingua* = language
pt tempo = weather time
pt clima = weather
pt previsao = forecast
pt chuv* = rain weather
pt rota = route directions
pt rotas = route directions
pt caminho* = route path
pt endereco* = address
pt lugar* = place
pt localiz* = location place
pt restaurant* = restaurant
pt perto = nearby
pt distanc* = distance
pt altitude = elevation
pt altura = height elevation
pt mapa* = map
pt pagina* = page
pt site* = website
pt navega* = browser navigate
pt abra = open
pt abre = open
pt abrir = open
pt clic* = click
pt digit* = type
pt preench* = fill
pt captur* = screenshot capture
pt tela = screen
pt imagem = image
pt imagens = image
pt foto* = photo image
pt gerar = generate
pt gere = generate
pt gerando = generate
pt gerado = generate
pt banco* = database
pt dado* = data
pt tabela* = table
pt consult* = query
pt linha* = row line
pt registr* = record log
pt implant* = deploy
pt publica* = publish deploy
pt publique = publish deploy
pt aplicativ* = app
pt aplicac* = app application
pt servidor* = server
pt contain* = container
pt execut* = run execute
pt rodar = run
pt rode = run
pt roda = run
pt comando* = command
pt processo* = process
pt lembr* = remember memory
pt memori* = memory
pt nota* = note
pt pens* = think
pt contato* = contact
pt empresa* = company
pt negocio* = deal
pt document* = documentation document
pt biblioteca* = library
pt comentar* = comment
pt coment* = comment
pt ramo* = branch
pt branch* = branch
pt video* = video
pt transcri* = transcript
pt legenda* = caption subtitle
pt notici* = news
pt usuari* = user
pt projeto* = project
pt configurac* = config setting
pt segredo* = secret
pt variave* = variable
pt chave* = key
pt agenda* = schedule
pt reuniao = meeting
pt banco dados = database
es base datos = database
es llegar = directions route
de termin = meeting schedule
de termine = meeting schedule
de viele = count
pt quant* = count how many
pt ultim* = latest last
pt web = web
pt internet = web internet
pt rede = network
pt desempenh* = performance
pt indice* = index
pt vetor* = vector
pt semelhan* = similar
pt resum* = summary
pt esper* = wait
es archivo* = file
es fichero* = file
es carpeta* = folder directory
es directorio* = directory
es borr* = delete
es elimin* = delete remove
es quit* = remove
es crea = create
es crear = create
es cree = create
es creando = create
es nuev* = new
es anad* = add
es agreg* = add
es list* = list
es muestr* = show
es mostr* = show
es busc* = search find
es encuentr* = find
es obten* = get
es consegu* = get
es trae* = get
es trae = get
es lee = read
es leer = read
es escrib* = write
es guard* = save
es actualiz* = update
es edit* = edit
es cambi* = change
es muev* = move
es mover = move
es mueve = move
es mueva = move
es renombr* = rename
es copi* = copy
es envia* = send
es envie = send
es mand* = send
es avis* = notify tell
es mensaj* = message
es conversac* = conversation
es canal* = channel
es equipo* = team
es repositori* = repository
es problema* = problem issue
es incidenc* = issue
es error* = error
es tarea* = task issue
es pago* = payment
es paga* = pay
es pague = pay
es cobr* = charge
es factura* = invoice
es client* = customer
es reembols* = refund
es devoluc* = refund
es suscripc* = subscription
es precio* = price
es producto* = product
es pedido* = order
es traduc* = translate translation
es idioma* = language
es tiempo = weather time
es clima = weather
es pronostico* = forecast
es lluvi* = rain weather
es ruta* = route directions
es direcc* = address directions
es lugar* = place
es ubicac* = location
es restaurant* = restaurant
es cerca = nearby
es distanc* = distance
es altitud* = elevation
es altura* = height elevation
es elevac* = elevation
es mapa* = map
es pagina* = page
es sitio* = website site
es naveg* = browser navigate
es abra = open
es abre = open
es abrir = open
es haz = make
es hacer = make
es hace = make
es clic* = click
es pulsa* = click press
es escrib* = type write
es rellen* = fill
es captur* = screenshot capture
es pantall* = screen
es imagen* = image
es foto* = photo image
es genera = generate
es generar = generate
es genere = generate
es datos = data
es tabla* = table
es consult* = query
es fila* = row
es registr* = record log
es desplieg* = deploy
es despleg* = deploy
es publica = publish
es publicar = publish
es publique = publish
es aplicac* = app application
es servidor* = server
es contenedor* = container
es ejecut* = run execute
es comando* = command
es proceso* = process
es recuerd* = remember
es memori* = memory
es nota* = note
es pens* = think
es piens* = think
es contacto* = contact
es empresa* = company
es negocio* = deal
es oportunidad* = deal opportunity
es documentac* = documentation
es biblioteca* = library
es librer* = library
es comentar* = comment
es rama* = branch
es video* = video
es transcrip* = transcript
es subtitulo* = subtitle caption
es notici* = news
es usuario* = user
es proyecto* = project
es configurac* = config setting
es secreto* = secret
es variable* = variable
es clave* = key
es reunion* = meeting
es cuant* = count how many
es ultim* = latest last
es rendimiento* = performance
es indice* = index
es vector* = vector
es similar* = similar
es resum* = summary
es esper* = wait
es equipo = team
es web = web
de datei* = file
de dokument* = document
de ordner* = folder directory
de verzeichnis* = directory
de losch* = delete
de entfern* = remove delete
de erstell* = create
de anleg* = create
de neu = new
de neue = new
de neuen = new
de neuer = new
de neues = new
de hinzufug* = add
de auflist* = list
de liste* = list
de zeig* = show list
de such* = search find
de find* = find
de hol = get fetch
de hole = get fetch
de holen = get fetch
de holt = get fetch
de abruf* = get fetch
de lese = read
de lesen = read
de lies = read
de liest = read
de schreib* = write
de speicher* = save store
de aktualisier* = update
de bearbeit* = edit
de ander* = change
de verschieb* = move
de umbenenn* = rename
de kopier* = copy
de send* = send
de schick* = send
de benachrichtig* = notify
de sag = tell
de sage = tell
de sagen = tell
de nachricht* = message
de kanal* = channel
de team* = team
de repository* = repository
de problem* = problem issue
de fehler* = error bug
de ticket* = ticket issue
de aufgab* = task issue
de zahlung* = payment
de bezahl* = pay
de rechnung* = invoice
de kunde* = customer
de ruckerstatt* = refund
de erstatt* = refund
de abonnement* = subscription
de abo = subscription
de preis* = price
de produkt* = product
de bestell* = order
de ubersetz* = translate
de sprach* = language
de wetter* = weather
de vorhersag* = forecast
de regen = rain weather
de regnet = rain weather
de route* = route directions
de weg = route directions
de wegbeschreib* = directions
de adress* = address
de ort = place
de orte = place
de standort* = location
de restaurant* = restaurant
de essen = food restaurant
de nahe = nearby
de nahegelegen* = nearby
de umgebung = nearby
de entfernung* = distance
de hohe = elevation height
de hoch = elevation height
de meeresspiegel = sea level elevation
de karte* = map
de seite* = page
de webseite* = website page
de website* = website
de browser* = browser
de offne* = open
de klick* = click
de tippe* = type
de ausfull* = fill
de fulle* = fill
de formular* = form
de bildschirmfoto* = screenshot
de screenshot* = screenshot
de bildschirm* = screen
de bild* = image
de foto* = photo image
de generier* = generate
de datenbank* = database
de daten = data
de tabell* = table
de abfrag* = query
de zeil* = row
de eintrag* = record entry
de bereitstell* = deploy
de deploy* = deploy
de veroffentlich* = publish
de anwendung* = app application
de server* = server
de container* = container
de ausfuhr* = run execute
de starte* = run start
de befehl* = command
de prozess* = process
de merke = remember
de merken = remember
de merk = remember
de erinner* = remember
de gedachtnis* = memory
de notiz* = note
de denke = think
de denken = think
de nachdenken = think
de kontakt* = contact
de firma = company
de firmen = company
de unternehm* = company
de geschaft* = deal
de dokumentation* = documentation
de bibliothek* = library
de kommentar* = comment
de zweig* = branch
de video* = video
de transkript* = transcript
de untertitel* = subtitle caption
de nachricht = message
de neuigkeit* = news
de nutzer* = user
de benutzer* = user
de projekt* = project
de einstellung* = setting config
de geheimnis* = secret
de variabl* = variable
de schlussel* = key
de besprechung* = meeting
de alle = all
de letzt* = latest last
de netzwerk* = network
de leistung* = performance
de index* = index
de vektor* = vector
de ahnlich* = similar
de zusammenfass* = summary
de warte = wait
de warten = wait
de protokoll* = log
pt analis* = analyze
es analiz* = analyze
de analysier* = analyze
pt causa = cause
es causa = cause
de ursache* = cause
es produccion* = production
pt alug* = rent
es prueba* = test
pt teste* = test
de teste = test
es fall* = fail
pt falh* = fail failure
de fehlschlag* = fail failure
es intermitent* = flaky
pt intermitent* = flaky
de instabil* = flaky
de barrierefrei* = accessibility
es accesibilidad* = accessibility
pt acessibilidade* = accessibility
de pruf* = check audit
pt verific* = check
es comprueb* = check
es revis* = check review
pt conclu* = done complete
pt feit* = done
es terminad* = done finish
es terminar = finish
es hech* = done
de erledig* = done
de fertig* = done
de nachst* = next
pt proxim* = next
es siguiente* = next
de plan* = plan
pt plano* = plan
es plan* = plan
es alquil* = rent
de miet* = rent
es alojamiento* = accommodation stay rent
pt hospedagem = accommodation stay
de unterkunft* = accommodation stay
pt apartamento* = apartment flat
es apartamento* = apartment flat
es piso* = apartment flat
de wohnung* = apartment flat
pt producao = production
de produktion* = production
pt poligono* = polygon
es poligono* = polygon
de polygon* = polygon
pt calcul* = calculate
es calcul* = calculate
de berechn* = calculate
de flache* = area
pt area = area
es area = area
es rastre* = crawl
pt rastre* = crawl
de crawl* = crawl
pt estado* = status state
es estado* = status state
de zustand* = status state
pt monitor* = monitor
es monitor* = monitor
de uberwach* = monitor
pt interromp* = stop
pt parar = stop
pt pare = stop
es deten* = stop
es parar = stop
de stopp* = stop
de anhalt* = stop
de beend* = stop end
pt selecion* = select
es seleccion* = select
de auswahl* = select
de wahle = select
pt detalh* = detail
es detalle* = detail
de detail* = detail
de einzelheit* = detail
pt propriedad* = property
es propiedad* = property
de eigenschaft* = property
pt texto* = text
es texto* = text
pt sessao = session
pt sessoes = session
es sesion* = session
de sitzung* = session
pt carreg* = upload
es subir = upload
es sube = upload
de hochlad* = upload
pt descrev* = describe
pt descric* = describe description
es describ* = describe
es descripc* = describe description
de beschreib* = describe description
pt encaminh* = forward
es reenvi* = forward
de weiterleit* = forward
pt conteudo* = content
es contenido* = content
de inhalt* = content
pt conect* = connect
es conect* = connect
de verbind* = connect connection
pt arrast* = drag
es arrastr* = drag
pt informac* = information info
es informac* = information info
de information* = information info
pt codigo* = code
es codigo* = code
de quellcode* = code
pt redimension* = resize
es redimension* = resize
pt relac* = relation
es relacion* = relation
de beziehung* = relation
es enlace* = link
de verknupf* = link
pt ponto* = point
es punto* = point
de punkt* = point
pt uso = usage
pt consumo* = usage
es uso = usage
es consumo* = usage
de nutzung* = usage
de verbrauch* = usage
pt valid* = validate
es valid* = validate
de validier* = validate
de gultig* = valid
pt esquema* = schema
es esquema* = schema
pt tamanho* = size
es tamano* = size
de grosse = size
pt campo* = field
es campo* = field
de feld* = field
de felder = field
pt limp* = clear
es limpi* = clear
pt exporta* = export
es exporta* = export
de exportier* = export
pt importar = import
pt importe = import
es importar = import
es importe = import
de importier* = import
pt transmit* = broadcast
es difund* = broadcast
de rundsend* = broadcast
pt entidad* = entity
es entidad* = entity
de entitat* = entity
pt inspecion* = inspect
es inspeccion* = inspect
de untersuch* = inspect
pt resultado* = result
es resultado* = result
de ergebnis* = result
pt armazen* = storage store
es almacen* = storage store
pt aprov* = approve
es aprob* = approve
de genehmig* = approve
de freigeb* = approve
de uberpruf* = review check
pt dialogo* = dialog
es dialogo* = dialog
pt opcao = option
pt opcoes = option
es opcion* = option
de option* = option
pt solicitac* = request
pt requisic* = request
es solicitud* = request
de anfrage* = request
pt lote* = batch
es lote* = batch
de stapel* = batch
pt bloque* = block
es bloque* = block
de blockier* = block
pt servico* = service
es servicio* = service
de dienst* = service
pt recurso* = resource
es recurso* = resource
de ressource* = resource
es investig* = research
de forschung* = research
pt fonte* = source
es fuente* = source
de quelle* = source
pt artigo* = article paper
es articulo* = article paper
de artikel* = article paper
pt grafico* = chart
es grafico* = chart
de diagramm* = chart
pt objeto* = object
es objeto* = object
de objekt* = object
pt ferrament* = tool
es herramient* = tool
de werkzeug* = tool
pt glossario* = glossary
es glosario* = glossary
de glossar* = glossary
pt avali* = evaluate
es evalu* = evaluate
de bewert* = evaluate
pt respost* = response reply
es respuest* = response reply
de antwort* = response reply
pt padrao = default
es predetermin* = default
pt simula* = simulate
es simula* = simulate
de simulier* = simulate
pt emul* = emulate
de emulier* = emulate
pt celular* = phone mobile
pt telemovel = phone mobile
es movil* = phone mobile
de handy* = phone mobile
`

// extraStopWords are the stop words of the four languages beyond Snowball's English list:
// words that say nothing about which tool is wanted.
var extraStopWords = setOf(`please want need help can could would like something thing things way use using via also me us let lets kindly
o a os as de do da dos das em no na nos nas um uma uns umas para por com que e ou meu minha meus minhas se eu quero preciso pode poderia favor este esta isso esse essa qual quais como onde quando ao aos seu sua seus suas tambem ja mais sobre voce
el la los las un una unos unas del en y que para por con mi mis yo quiero necesito puedes podrias favor este esta eso ese esa cual como donde cuando al su sus tambien lo le mas sobre es son hay
der die das den dem des ein eine einen einem einer und oder im auf fur mit von vom zu zum zur ich mir mich mein meine meinen meiner bitte mochte will brauche kannst konntest du sie es ist sind was wie wo wann welche welcher welches auch am aus bei nach uber dies diese diesen dieser alle mal noch`)

// The tables, parsed once: synonyms by stem, phrases by their two words, lexicon by
// folded word and by stem prefix.
var (
	synonyms     = map[string][]string{}
	phrases      = map[string][]string{}
	lexicon      = map[string][]string{}
	lexiconStems = map[string][]string{}
)

func init() {
	for _, line := range strings.Split(synonymGroups, "\n") {
		var stems []string
		for _, w := range strings.Fields(line) {
			stems = append(stems, stemAll(strings.ReplaceAll(w, "-", " "))...)
		}
		for _, s := range stems {
			for _, o := range stems {
				if o != s && !contains(synonyms[s], o) {
					synonyms[s] = append(synonyms[s], o)
				}
			}
		}
	}
	for _, line := range strings.Split(phraseTable, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		phrases[strings.Join(strings.Fields(k), " ")] = stemAll(v)
	}
	for _, line := range strings.Split(lexiconTable, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		f := strings.Fields(k)
		if len(f) < 2 {
			continue
		}
		key := strings.Join(f[1:], " ")
		en := stemAll(v)
		switch {
		case strings.HasSuffix(key, "*"):
			lexiconStems[strings.TrimSuffix(key, "*")] = appendNew(lexiconStems[strings.TrimSuffix(key, "*")], en)
		case strings.Contains(key, " "):
			phrases[key] = appendNew(phrases[key], en)
		default:
			lexicon[key] = appendNew(lexicon[key], en)
		}
	}
}

// stemAll stems the words of s.
func stemAll(s string) []string {
	var out []string
	for _, w := range Terms(s) {
		out = append(out, Stem(w))
	}
	return out
}

func appendNew(dst, src []string) []string {
	for _, s := range src {
		if !contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
