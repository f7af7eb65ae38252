# Serves a PHP application with Apache; dependencies are installed with Composer in a separate stage.
# Adapt: the PHP version, the PHP extensions, the document root (public/ below) and the port.

# Dependency stage: Composer without dev packages, with an optimised autoloader.
FROM composer:2.8.4 AS vendor
WORKDIR /app
COPY composer.json composer.lock ./
RUN composer install --no-dev --no-scripts --no-interaction --prefer-dist --optimize-autoloader

FROM php:8.3.14-apache-bookworm
# Extensions: add the ones your application uses (docker-php-ext-install ...).
RUN docker-php-ext-install opcache pdo_mysql \
    && mv "$PHP_INI_DIR/php.ini-production" "$PHP_INI_DIR/php.ini"

# Apache listens on 8080 (ports below 1024 need root) and serves the public/ folder.
ENV APACHE_DOCUMENT_ROOT=/var/www/html/public
RUN sed -ri 's/Listen 80$/Listen 8080/' /etc/apache2/ports.conf \
    && sed -ri 's/<VirtualHost \*:80>/<VirtualHost *:8080>/' /etc/apache2/sites-available/000-default.conf \
    && sed -ri 's!/var/www/html!${APACHE_DOCUMENT_ROOT}!g' /etc/apache2/sites-available/000-default.conf

COPY --chown=www-data:www-data . /var/www/html
COPY --from=vendor --chown=www-data:www-data /app/vendor /var/www/html/vendor

# Apache's run, lock and log folders already belong to www-data in the official image.
USER www-data
EXPOSE 8080
