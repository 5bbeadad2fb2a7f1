# structcrawl image: the package, its Scrapy project (scrapy.cfg + settings/) and the demo site.
# Used by docker-compose.yml for the demo-site, crawler and harvester services.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md scrapy.cfg ./
COPY structcrawl ./structcrawl
COPY settings ./settings
RUN pip install .
# `scrapy crawl structure` needs the project directory (scrapy.cfg) as its working directory
WORKDIR /app
