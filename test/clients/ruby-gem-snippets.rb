# One call of the Ruby gitlab gem (Debian's ruby-gitlab) on personal snippets, for
# test/clients/ruby-gem-snippets.test.ts:
#   ruby ruby-gem-snippets.rb ENDPOINT TOKEN METHOD[.THEN ...] [ARGUMENT ...]
# Each ARGUMENT is JSON (an id, or a hash of options) for METHOD; each THEN is called on what the one
# before returned, without arguments (`public_snippets.auto_paginate` follows the Link header). Prints {"value": what the gem returned} or, when
# the gem raised, {"error": {"class", "status", "body"}}: what a gem user's code gets to see (the body
# as parsed: the gem's own `response_message` fails on an error of a raw call, which it parses as a Hash).
require 'gitlab'
require 'json'

endpoint, token, method, *args = ARGV
client = Gitlab.client(endpoint: endpoint, private_token: token)
# Hashes as the gem's users write them: symbol keys, nested ones included.
args = args.map { |arg| JSON.parse(arg, symbolize_names: true) }

# What the gem returned, as plain JSON: its ObjectifiedHash and PaginatedResponse wrap parsed JSON.
def plain(value)
  case value
  when Gitlab::ObjectifiedHash then value.to_h
  when Gitlab::PaginatedResponse, Array then value.map { |item| plain(item) }
  else value
  end
end

class Gitlab::Error::ResponseError
  attr_reader :response
end

begin
  first, *rest = method.split('.')
  value = rest.reduce(client.public_send(first, *args)) { |result, name| result.public_send(name) }
  puts JSON.generate({ value: plain(value) })
rescue Gitlab::Error::ResponseError => e
  body = plain(e.response.parsed_response)
  puts JSON.generate({ error: { class: e.class.name, status: e.response_status, body: body } })
end
